"""The OpenAI Python SDK on its defaults against a Gantry base URL (argv[1]) and model (argv[2]).

Prints one JSON object of what the SDK returned, for test/clients/python-openai.e2e-spec.ts.
"""

import json
import math
import sys

import openai

base_url, model = sys.argv[1], sys.argv[2]
client = openai.OpenAI(base_url=base_url, api_key="test-key", max_retries=0)
out = {"version": openai.__version__}

# embeddings.create asks for base64 by default and decodes it.
default = client.embeddings.create(model=model, input=["red apple", "green pear"])
floats = client.embeddings.create(model=model, input="red apple", encoding_format="float")
out["embeddings"] = {
    "count": len(default.data),
    "finite": all(math.isfinite(value) for item in default.data for value in item.embedding),
    "base64_equals_float": default.data[0].embedding == floats.data[0].embedding,
    "differ": default.data[0].embedding != default.data[1].embedding,
    "prompt_tokens": default.usage.prompt_tokens,
}

whole = client.completions.create(model=model, prompt="def add(a, b):", max_tokens=16)
out["completion"] = {"object": whole.object, "text": whole.choices[0].text, "finish": whole.choices[0].finish_reason}

texts = {}
finishes = {}
usage = None
for chunk in client.completions.create(
    model=model, prompt=["one two", "three"], n=2, stream=True, stream_options={"include_usage": True}
):
    for choice in chunk.choices:
        texts[choice.index] = texts.get(choice.index, "") + choice.text
        if choice.finish_reason is not None:
            finishes[choice.index] = choice.finish_reason
    if chunk.usage is not None:
        usage = chunk.usage.model_dump()
out["streamed_choices"] = {"texts": [texts[i] for i in sorted(texts)], "finishes": [finishes[i] for i in sorted(finishes)], "usage": usage}

chat = ""
for chunk in client.chat.completions.create(
    model=model, messages=[{"role": "user", "content": "hello python"}], stream=True
):
    if chunk.choices and chunk.choices[0].delta.content:
        chat += chunk.choices[0].delta.content
out["chat"] = chat

print(json.dumps(out))
