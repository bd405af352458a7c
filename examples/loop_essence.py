"""The agent loop in ten lines: what v1_basic.py does, without the guards.

The v1 chapter shows the loop below before the real one. It runs: it borrows v1's tools, and
tests/test_docs.py plays a scripted model against it, so the page cannot drift from what works.
"""

import anthropic

# --8<-- [start:essence]
def agent_loop(client: anthropic.Anthropic, model: str, tools: list, handlers: dict,
               messages: list) -> str:
    while True:
        response = client.messages.create(model=model, max_tokens=8000, tools=tools,
                                          messages=messages)
        messages.append({"role": "assistant", "content": response.content})
        calls = [block for block in response.content if block.type == "tool_use"]
        if not calls:  # no tool asked for: the turn is over, the text is the answer
            return "".join(block.text for block in response.content if block.type == "text")
        results = [{"type": "tool_result", "tool_use_id": call.id,
                    "content": handlers[call.name](**call.input)} for call in calls]
        messages.append({"role": "user", "content": results})  # every call answered, then again
# --8<-- [end:essence]
