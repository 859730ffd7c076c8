"""Tool and document lists shared by the chat-template tests (CLI, engine, panel)."""

TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "Weather of a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}]
COHERE_TOOLS = [{"name": "internet_search", "description": "Search the web",
                 "parameter_definitions": {"query": {"description": "what to search",
                                                     "type": "str", "required": True}}}]
DOCUMENTS = [{"title": "Tokyo", "text": "Tokyo is the capital of Japan."},
             {"title": "Paris", "text": "Paris has 2.1 million people."}]
