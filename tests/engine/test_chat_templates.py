"""Chat templates render byte-identically to transformers (real templates from llama.cpp's
GGUF vocabularies and HF configs, and the built-ins), and hostile templates are stopped."""

from __future__ import annotations

import json
import time

import pytest
from chat_samples import COHERE_TOOLS, DOCUMENTS, TOOLS
from references import require

from explorer.engine.chat.prompt import build_prompt
from explorer.engine.chat.sandbox import ChatTemplateError, render
from explorer.engine.chat.templates import BUILTIN_TEMPLATES, chat_setup
from explorer.engine.formats import load_tokenizer

GGUF_WITH_TEMPLATES = ("command-r", "gemma-4", "phi-3", "qwen2", "qwen35")

CONVERSATIONS = [
    [{"role": "user", "content": "Hello!"}],
    [{"role": "system", "content": "You are a terse assistant. Réponds en français."},
     {"role": "user", "content": "Wie viele Tokens hat dieser Satz? 😀"},
     {"role": "assistant", "content": "  Lass mich zählen.\n"},
     {"role": "user", "content": "東京の天気は?\n\tAnd   spaces  "}],
    [{"role": "user", "content": "What is 2+2?"},
     {"role": "assistant", "content": "4", "reasoning_content": "Simple arithmetic."},
     {"role": "user", "content": "And 3+3?"}],
    [{"role": "user", "content": "Weather in Paris?"},
     {"role": "assistant", "content": "", "tool_calls": [{"type": "function", "function": {
         "name": "get_weather", "arguments": {"city": "Paris"}}}]},
     {"role": "tool", "content": "{\"temp\": 21}", "name": "get_weather"},
     {"role": "user", "content": "Thanks"}],
]


def hf_render(source: str, messages, **kwargs) -> str:
    """transformers' own rendering (what apply_chat_template(tokenize=False) calls)."""
    utils = pytest.importorskip("transformers.utils.chat_template_utils")
    rendered, _ = utils.render_jinja_template(conversations=[messages], chat_template=source,
                                              **kwargs)
    return rendered[0]


def same_as_transformers(source: str, messages, *, variables, **kwargs) -> str | None:
    """Our render equals transformers', or both refuse; returns ours (None if refused)."""
    try:
        expected = hf_render(source, messages, **kwargs, **variables)
    except Exception as e:  # the template refused this conversation: we must refuse too
        with pytest.raises(ChatTemplateError):
            render(source, messages, variables=variables, **kwargs)
        return f"refused: {type(e).__name__}"
    got = render(source, messages, variables=variables, **kwargs)
    assert got == expected
    return got


@pytest.mark.parametrize("name", GGUF_WITH_TEMPLATES)
def test_gguf_templates_match_transformers(name):
    path = require("llama-cpp", f"ggml-vocab-{name}.gguf")
    setup = chat_setup(path)
    assert setup.templates, f"{name} has no template"
    assert setup.context_length and setup.context_length > 1000
    rendered = 0
    for tname, source in setup.templates.items():
        for messages in CONVERSATIONS:
            for gen in (False, True):
                extra = {"tools": COHERE_TOOLS if name == "command-r" else TOOLS} \
                    if tname == "tool_use" else (
                        {"documents": DOCUMENTS} if tname == "rag" else {})
                out = same_as_transformers(source, messages, variables=setup.variables,
                                           add_generation_prompt=gen, **extra)
                rendered += not (out or "").startswith("refused")
    # every template renders most conversations; the refusals were compared too
    assert rendered >= 6 * len(setup.templates)


@pytest.mark.parametrize("name", sorted(BUILTIN_TEMPLATES))
def test_builtin_templates_match_transformers(name):
    variables = {"bos_token": "<s>", "eos_token": "</s>"}
    for messages in CONVERSATIONS:
        for gen in (False, True):
            same_as_transformers(BUILTIN_TEMPLATES[name], messages, variables=variables,
                                 add_generation_prompt=gen)


def test_hf_environment_features_match():
    """tojson as HF defines it, loop controls, trim/lstrip blocks, dict, namespace."""
    source = ("{%- set ns = namespace(n=0) -%}\n"
              "{% for m in messages %}\n"
              "  {% if m.role == 'system' %}{% continue %}{% endif %}\n"
              "  {% set ns.n = ns.n + 1 %}\n"
              "  {{ m | tojson }} {{ m | tojson(indent=2, sort_keys=true) }}\n"
              "  {% if loop.index > 2 %}{% break %}{% endif %}\n"
              "{% endfor %}{{ ns.n }} {{ dict(a=1) | tojson }} {{ '<&>é' | tojson }}"
              "{% generation %}gen{% endgeneration %}")
    for messages in CONVERSATIONS:
        same_as_transformers(source, messages, variables={})
    src = "{{ strftime_now('%Y') }}"
    assert render(src, CONVERSATIONS[0]) == hf_render(src, CONVERSATIONS[0])


def test_folder_template_matches_apply_chat_template(tmp_path):
    """A model folder's named templates, through AutoTokenizer.apply_chat_template."""
    transformers = pytest.importorskip("transformers")
    src = require("minilm-folder", "tokenizer.json").parent
    import shutil

    folder = tmp_path / "minilm"
    shutil.copytree(src, folder)
    cfg = json.loads((folder / "tokenizer_config.json").read_text())
    cfg["chat_template"] = [
        {"name": "default", "template": "{{ cls_token }}{% for m in messages %}{{ m['role'] }}: "
                                        "{{ m['content'] }} {{ sep_token }} {% endfor %}"},
        {"name": "chatml", "template": BUILTIN_TEMPLATES["chatml"]}]
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    ref = transformers.AutoTokenizer.from_pretrained(str(folder))
    tok = load_tokenizer(folder / "vocab.txt")
    setup = chat_setup(folder / "vocab.txt", tok.info.special_tokens)
    assert setup.names()[:2] == ["default", "chatml"]
    for tname in ("default", "chatml"):
        for messages in CONVERSATIONS[:2]:
            kwargs = {} if tname == "default" else {"chat_template": "chatml"}
            text = ref.apply_chat_template(messages, tokenize=False, **kwargs)
            assert render(setup.template(tname), messages, variables=setup.variables) == text
            prompt = build_prompt(tok, setup.template(tname), messages,
                                  variables=setup.variables)
            ids = ref.apply_chat_template(messages, tokenize=True, return_dict=False, **kwargs)
            assert prompt.encoding.ids == list(ids)
            assert sum(prompt.counts) + prompt.tail_count == prompt.total  # type: ignore[arg-type]


def test_per_message_counts_add_up():
    tok = load_tokenizer(require("llama-cpp", "ggml-vocab-qwen2.gguf"))
    setup = chat_setup(require("llama-cpp", "ggml-vocab-qwen2.gguf"), tok.info.special_tokens)
    messages = CONVERSATIONS[1]
    prompt = build_prompt(tok, setup.template("default"), messages, add_generation_prompt=True,
                          variables=setup.variables, context_length=setup.context_length)
    assert prompt.spans[0] == (0, prompt.text.index("<|im_start|>user"))
    assert all(c and c > 3 for c in prompt.counts)
    assert prompt.tail_count == 3  # <|im_start|> assistant \n
    assert sum(prompt.counts) + prompt.tail_count == prompt.total  # type: ignore[arg-type]
    specials = [t for t in prompt.encoding.tokens if t.special]
    assert {t.piece for t in specials} == {"<|im_start|>", "<|im_end|>"}
    assert prompt.message_of_token(0) == 0


# ---------------------------------------------------------------- hostile templates

MSGS = CONVERSATIONS[1]


def test_endless_loop_is_stopped_by_the_time_limit():
    src = ("{% for a in range(100000) %}{% for b in range(100000) %}{% for c in messages %}"
           "{% endfor %}{% endfor %}{% endfor %}")
    t = time.monotonic()
    with pytest.raises(ChatTemplateError, match=r"longer than 0\.3 s"):
        render(src, MSGS, time_limit=0.3)
    assert time.monotonic() - t < 5


def test_recursion_is_stopped():
    with pytest.raises(ChatTemplateError, match="recursed"):
        render("{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(1) }}", MSGS)


@pytest.mark.parametrize("src", [
    "{{ messages.__class__.__mro__[1].__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os }}",
    "{{ raise_exception.__globals__ }}",
    "{{ namespace.__init__.__globals__ }}",
    "{{ messages.append(1) }}",
    "{{ messages[0].update({'role': 'x'}) }}",
    "{% set ns = namespace(__class__=1) %}",
    "{{ ''.__class__ }}",
])
def test_escaping_the_sandbox_is_refused(src):
    with pytest.raises(ChatTemplateError, match=r"sandbox|unsafe|underscore|undefined"):
        render(src, MSGS)


@pytest.mark.parametrize("src", [
    "{% for i in range(100000) %}{{ 'x' * 50 }}{% endfor %}",
    "{{ 'x' * 10**10 }}",
    "{{ [1] * 10**9 }}",
    "{{ 7 ** 100000000 }}",
    "{{ 'x' | center(10**9) }}",
    "{{ 'x' | indent(10**9) }}",
    "{{ '%*d' % (10**9, 1) }}",
    "{{ '%1000000000d' % 1 }}",
    "{{ '{:>1000000000}'.format(1) }}",
    "{{ '{0:>{1}}'.format(1, 10**9) }}",
    "{{ 7 ** 1000000 }}",
])
def test_output_and_allocation_limits(src):
    with pytest.raises(ChatTemplateError, match=r"exceeds|would build|wider|field width"):
        render(src, MSGS, max_output=100_000)


@pytest.mark.parametrize(("src", "needle"), [
    ("{{ raise_exception('Roles must alternate') }}", "Roles must alternate"),
    ("{% for x in %}", "syntax error on line 1"),
    ("{{ 1 / 0 }}", "ZeroDivisionError"),
    ("{{ messages[99]['content'] }}", "chat template error"),
])
def test_template_errors_are_one_clear_message(src, needle):
    with pytest.raises(ChatTemplateError, match=needle) as e:
        render(src, MSGS)
    assert "\n" not in str(e.value).strip() or needle in str(e.value)


def test_empty_conversation_is_refused():
    with pytest.raises(ChatTemplateError, match="empty"):
        render(BUILTIN_TEMPLATES["chatml"], [])
