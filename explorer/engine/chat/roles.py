"""The roles a chat message may have (the chat panel's message list offers them).

Apart from :mod:`explorer.engine.chat.prompt`, which imports jinja2: the window builds the
message list at start-up and renders nothing until the chat panel is used.
"""

ROLES = ("system", "user", "assistant", "tool")
"""Message roles, in the order the message list offers them."""
