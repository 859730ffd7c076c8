"""``tokenizer-explorer chat`` and the new ``--vocab`` inputs on the command line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from chat_samples import COHERE_TOOLS, DOCUMENTS, TOOLS
from references import require

from explorer.cli import main

ROOT = Path(__file__).resolve().parent.parent
MESSAGES = [{"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "Wie viele Tokens? 😀"},
            {"role": "assistant", "content": "Lass mich zählen."},
            {"role": "user", "content": "東京の天気は?"}]


@pytest.fixture
def messages_file(tmp_path) -> Path:
    p = tmp_path / "messages.json"
    p.write_text(json.dumps(MESSAGES, ensure_ascii=False), encoding="utf-8")
    return p


def run(argv, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_chat_text_is_exactly_transformers(messages_file, capsys):
    utils = pytest.importorskip("transformers.utils.chat_template_utils")
    from explorer.engine.chat.templates import chat_setup

    gguf = require("llama-cpp", "ggml-vocab-qwen2.gguf")
    setup = chat_setup(gguf)
    capsys.readouterr()  # transformers' import notice
    for gen in (False, True):
        flags = ["--add-generation-prompt"] if gen else []
        code, out, err = run(["chat", "--vocab", gguf, messages_file, *flags], capsys)
        expected = utils.render_jinja_template(
            conversations=[MESSAGES], chat_template=setup.templates["default"],
            add_generation_prompt=gen, **setup.variables)[0][0]
        assert code == 0 and err == "" and out == expected


def test_chat_ids_counts_json(messages_file, capsys):
    gguf = require("llama-cpp", "ggml-vocab-qwen2.gguf")
    code, out, _ = run(["chat", "--vocab", gguf, messages_file, "--output", "json",
                        "--add-generation-prompt"], capsys)
    payload = json.loads(out)
    code2, ids, _ = run(["chat", "--vocab", gguf, messages_file, "--output", "ids",
                         "--add-generation-prompt"], capsys)
    code3, counts, _ = run(["chat", "--vocab", gguf, messages_file, "--output", "counts",
                            "--add-generation-prompt"], capsys)
    assert code == code2 == code3 == 0
    assert ids.split() == [str(i) for i in payload["ids"]]
    lines = counts.strip().split("\n")
    assert [ln.split("\t")[0] for ln in lines] == ["system", "user", "assistant", "user",
                                                    "generation prompt", "total"]
    assert lines[-1] == f"total\t{payload['total']} of {payload['context_length']}"
    assert sum(m["tokens"] for m in payload["messages"]) + \
        payload["generation_prompt_tokens"] == payload["total"]
    # the tokens are the vocabulary's encoding of the prompt, special tokens recognised
    from explorer.engine.formats import load_tokenizer

    assert payload["ids"] == load_tokenizer(gguf).encode(payload["prompt"]).ids


def test_chat_with_builtin_and_file_templates(messages_file, tmp_path, capsys):
    vocab = ROOT / "resources" / "vocab" / "cl100k_base.tiktoken"
    code, _, err = run(["chat", "--vocab", vocab, messages_file], capsys)
    assert code == 2 and "no chat template" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run(["chat", "--vocab", vocab, messages_file, "--template", "chatml"], capsys)
    assert code == 0 and out.startswith("<|im_start|>system\nYou are helpful.<|im_end|>\n")
    tpl = tmp_path / "t.jinja"
    tpl.write_text("{% for m in messages %}[{{ m.role }}]{% endfor %}")
    code, out, _ = run(["chat", "--vocab", vocab, messages_file, "--template", tpl], capsys)
    assert out == "[system][user][assistant][user]"




@pytest.mark.parametrize(("gguf", "template", "extra"), [
    ("gemma-4", None, {"tools": TOOLS}),
    ("command-r", "tool_use", {"tools": COHERE_TOOLS}),
    ("command-r", "rag", {"documents": DOCUMENTS}),
])
def test_chat_tools_and_documents_for_every_output(tmp_path, capsys, gguf, template, extra):
    """Tool-use and RAG templates: --output text/ids/json/counts all render with the tools or
    documents, exactly as transformers' apply_chat_template(tools=..., documents=...)."""
    utils = pytest.importorskip("transformers.utils.chat_template_utils")
    from explorer.engine.chat.templates import chat_setup
    from explorer.engine.formats import load_tokenizer

    path = require("llama-cpp", f"ggml-vocab-{gguf}.gguf")
    setup = chat_setup(path)
    source = setup.templates[template or "default"]
    expected = utils.render_jinja_template(
        conversations=[MESSAGES], chat_template=source, add_generation_prompt=True,
        **extra, **setup.variables)[0][0]
    try:  # the tools/documents are in the prompt (or the template needs them)
        plain = utils.render_jinja_template(
            conversations=[MESSAGES], chat_template=source, add_generation_prompt=True,
            **setup.variables)[0][0]
    except TypeError:
        plain = None
    assert expected != plain
    capsys.readouterr()
    conv = tmp_path / "conv.json"
    conv.write_text(json.dumps({"messages": MESSAGES, **extra}, ensure_ascii=False),
                    encoding="utf-8")
    flags = ["--add-generation-prompt", *(["--template", template] if template else [])]
    outs = {}
    for output in ("text", "ids", "json", "counts"):
        code, outs[output], err = run(["chat", "--vocab", path, conv, "--output", output,
                                       *flags], capsys)
        assert code == 0 and err == "", err
    assert outs["text"] == expected
    payload = json.loads(outs["json"])
    assert payload["prompt"] == expected
    want = load_tokenizer(path).encode(expected).ids
    assert payload["ids"] == want and outs["ids"].split() == [str(i) for i in want]
    assert outs["counts"].strip().split("\n")[-1].startswith(f"total\t{len(want)}")
    assert sum(m["tokens"] or 0 for m in payload["messages"]) + \
        payload["generation_prompt_tokens"] == payload["total"] == len(want)


@pytest.mark.parametrize(("template", "content", "needle"), [
    ("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
     None, "longer than"),
    ("{{ cycler.__init__.__globals__ }}", None, "sandbox"),
    ("{{ raise_exception('bad roles') }}", None, "bad roles"),
    ("{{ messages }}", "{not json", "malformed JSON"),
    ("{{ messages }}", '{"a": 1}', "non-empty list"),
    ("{{ messages }}", '[{"content": "x"}]', "string 'role'"),
    ("no-such-template", None, "no chat template named"),
])
def test_chat_errors_one_line_exit_2(tmp_path, messages_file, capsys, template, content,
                                     needle):
    vocab = ROOT / "resources" / "vocab" / "cl100k_base.tiktoken"
    if content is not None:
        messages_file.write_text(content)
    if template != "no-such-template":
        tpl = tmp_path / "hostile.jinja"
        tpl.write_text(template)
        template = str(tpl)
    code, _out, err = run(["chat", "--vocab", vocab, messages_file, "--template", template],
                         capsys)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err


def test_endless_template_in_a_real_process(tmp_path, messages_file):
    """The entry point itself: exit 2, one line, no traceback, in bounded time."""
    tpl = tmp_path / "loop.jinja"
    tpl.write_text("{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}"
                   "{% endfor %}")
    proc = subprocess.run([sys.executable, "-m", "explorer", "chat", "--vocab",
                           str(ROOT / "resources" / "vocab" / "cl100k_base.tiktoken"),
                           str(messages_file), "--template", str(tpl)],
                          capture_output=True, text=True, timeout=60,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("vocab", [
    ("minilm-folder", "vocab.txt"), ("minilm-folder", "."),
    ("mistral-tekken", "tekken_240911.json"), ("anthropic-tokenizer", "claude.json"),
    ("js-tiktoken", "o200k_base.js"),
])
def test_encode_and_info_take_the_new_inputs(vocab, capsys):
    path = require(*vocab) if vocab[1] != "." else require(vocab[0], "vocab.txt").parent
    code, out, err = run(["info", "--vocab", path], capsys)
    assert code == 0 and err == "" and "format" in out
    import io
    sys_stdin = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO("Hello wörld 😀".encode()), encoding="utf-8")
    try:
        code, out, err = run(["encode", "--vocab", path, "--output", "json"], capsys)
    finally:
        sys.stdin = sys_stdin
    assert code == 0 and json.loads(out)["ids"]
