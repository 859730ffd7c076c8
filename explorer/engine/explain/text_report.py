"""``tokenizer-explorer pipeline --output text``: every stage of one text, for a terminal."""

from __future__ import annotations

from explorer.engine.explain.pipeline import PipelineTrace


def format_trace(trace: PipelineTrace) -> str:
    """The stages of ``trace`` as labelled lines."""
    lines = [f"text        {trace.text!r}"]
    lines += [f"component   {c.kind}: {c.description}" for c in trace.components]
    lines.append(f"normalized  {trace.normalized!r}")
    for c in trace.changes:
        lines.append(f"  changed   {c.before!r} -> {c.after!r} "
                     f"(original {c.orig_start}-{c.orig_end})")
    for p in trace.pre_tokens:
        rule = f"  [{p.rule}]" if p.rule else ""
        lines.append(f"pre-token   {p.piece!r} {p.start}-{p.end}{rule}")
    enc = trace.encoding
    lines.append("tokens      " + " ".join(f"{t.piece}({t.id})" for t in enc))
    if trace.additions:
        lines.append("post-proc.  " + " ".join(f"+{a.piece}({a.id})@{a.index}"
                                               for a in trace.additions))
    elif trace.post_note:
        lines.append(f"post-proc.  {trace.post_note}")
    lines.append(f"decoded     {trace.decoded!r}")
    for x in trace.losses:
        lines.append(f"  lost      {x.original!r} -> {x.decoded!r} "
                     f"(original {x.orig_start}-{x.orig_end})")
    return "\n".join(lines) + "\n"
