#!/usr/bin/env python3
"""Renders a model directory's chat template the way transformers' apply_chat_template does.

The template is chat_template.jinja when the directory has one, else tokenizer_config.json's
chat_template (the entry named "default" of a list).

Same Jinja environment as transformers' _compile_jinja_template: ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks and loopcontrols; tojson = json.dumps(ensure_ascii=False); the globals
raise_exception and strftime_now; special tokens from tokenizer_config.json as variables;
add_generation_prompt=True. Used to produce the expected prompts in JinjaChatTemplateTest.

    python3 render_reference.py <model-dir> '<messages as JSON>' [YYYY-MM-DD ['<tools as JSON>']]

Tools are passed as transformers passes them (tools=None without); tool calls in the messages carry their
arguments as objects, as vLLM passes them to templates.

Prints the prompt as a JSON string (needs only the jinja2 package, 3.1 or later).
"""
import json
import os
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


def render(model_dir, messages, now, tools=None):
    with open(os.path.join(model_dir, "tokenizer_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    jinja_file = os.path.join(model_dir, "chat_template.jinja")
    if os.path.exists(jinja_file):
        with open(jinja_file, encoding="utf-8") as f:
            template = f.read()
    else:
        template = config["chat_template"]
    if isinstance(template, list):
        template = {t["name"]: t["template"] for t in template}["default"]

    def raise_exception(message):
        raise TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)
    tokens = {}
    for key in ("bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token"):
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if value is not None:
            tokens[key] = value
    return env.from_string(template).render(messages=messages, tools=tools, documents=None,
                                            add_generation_prompt=True, **tokens)


if __name__ == "__main__":
    when = datetime.fromisoformat(sys.argv[3]) if len(sys.argv) > 3 else datetime.now()
    tools = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
    print(json.dumps(render(sys.argv[1], json.loads(sys.argv[2]), when, tools), ensure_ascii=False))
