"""Explanations built from the engine's own data: every pipeline stage of a text
(:mod:`.pipeline`), how a token was made (:mod:`.provenance`) and why a boundary sits where it
sits (:mod:`.boundary`). Pure Python, no Qt."""
