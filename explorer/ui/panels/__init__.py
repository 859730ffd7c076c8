"""Side panels of the explorer window: merge queue, lattice, comparison, vocabulary browser.

Each panel is a standalone widget that draws data the engine yields (trace steps, lattices,
encodings, vocabulary entries); none of them contains tokenizer algorithm code.
"""
