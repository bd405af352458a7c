"""Exercise 7: what survives a compaction. v5 keeps a summary and a few facts word for word; here
the last KEEP_ROUNDS rounds of the conversation survive too, as they were sent. The task is in
README.md.

The scripted model works in rounds: a reply of the model (its thinking, a note, one or two
read_file calls) and the message that answers it (the results). With COMPACT_AT=1 every round
passes the threshold, so the agent compacts after each one: a summary track answers the summary
question wherever it comes. A test's name starts with the number of the rule it checks
(test_rule3_... checks rule 3 of README.md), and its failure says what is missing.
"""

SUMMARY = "We read the notes, one round at a time."
TASK = "Read the notes."


def reading(number: int, files: int = 1) -> dict:
    """Round `number`: the model thinks, notes what it does, and reads `files` notes."""
    calls = [{"name": "read_file", "input": {"path": f"note{number}.txt"}}] * files
    return {"thinking": f"Round {number}: read on.", "text": f"Reading note {number}.",
            "tool_calls": calls}


def play(api, agent, tmp_path, rounds: list[dict]) -> int:
    """The rounds, a compaction after each, then the answer; run_turn's exit code."""
    for number in range(1, len(rounds) + 1):
        (tmp_path / f"note{number}.txt").write_text(f"note {number}\n")
    summaries = {"match": "Write a summary of the work so far", "in": "last",
                 "turns": [{"text": SUMMARY, "repeat": len(rounds)}]}
    api.play({"turns": [*rounds, {"text": "Done."}], "tracks": [summaries]})
    return agent.run_turn([], TASK)


def keep_rounds(agent, rule: int) -> int:
    rounds = getattr(agent, "KEEP_ROUNDS", None)
    assert isinstance(rounds, int) and rounds >= 1, (
        f"rule {rule}: the script needs KEEP_ROUNDS = 2 (a number of rounds)"
        + (" (rule 1) before this rule can be checked" if rule != 1 else "")
    )
    return rounds


def compactions(api, rule: int) -> list[tuple[list, list]]:
    """For each compaction: the model's replies before it, oldest first, and the history that the
    request after it sent."""
    found, replies = [], []
    for number, request in enumerate(api.requests):
        if request.track == "default":
            if request.reply["status"] == 200:
                replies.append(request.reply["body"]["content"])
        elif number + 1 < len(api.requests):
            found.append((list(replies), api.requests[number + 1].body["messages"]))
    assert found, f"rule {rule}: no compaction went through, so this rule cannot be checked"
    return found


def calls_of(content: list) -> list[str]:
    return [block["id"] for block in content if block["type"] == "tool_use"]


def shown(messages: list) -> str:
    """A history in one line a message: its role and the types of its blocks."""
    return "; ".join(
        f"{message['role']}: {', '.join(block['type'] for block in message['content'])}"
        for message in messages
    ) or "nothing"


def prompt_size(request) -> int:
    usage = request.reply["body"].get("usage") or {}
    return sum(usage.values()) - usage.get("output_tokens", 0)


def test_rule1_the_last_rounds_come_after_the_summary_in_order(
    scripted_api, make_agent, tmp_path
):
    agent = make_agent(COMPACT_AT=1)
    rounds = keep_rounds(agent, 1)
    code = play(scripted_api, agent, tmp_path, [reading(n) for n in range(1, rounds + 3)])
    assert code == 0, f"rule 1: the turn did not go on after a compaction (exit code {code})"
    for number, (replies, after) in enumerate(compactions(scripted_api, 1), 1):
        assert after[0]["content"][0]["text"].startswith("<summary>"), (
            f"rule 1: the summary must come first, but the history starts: {shown(after[:1])}"
        )
        expected = [calls_of(reply) for reply in replies[-rounds:]]
        kept = [calls_of(message["content"]) for message in after[1:]
                if message["role"] == "assistant"]
        assert kept == expected, (
            f"rule 1: after compaction {number}, the summary must be followed by the last "
            f"{len(expected)} round(s), in order (the replies that made the calls {expected}); "
            f"it is followed by {shown(after[1:])}, with the calls {kept}"
        )


def test_rule2_each_kept_reply_comes_with_its_results_and_no_result_without_its_call(
    scripted_api, make_agent, tmp_path
):
    agent = make_agent(COMPACT_AT=1)
    keep_rounds(agent, 2)
    play(scripted_api, agent, tmp_path, [reading(1), reading(2, files=2), reading(3, files=2)])
    for _, after in compactions(scripted_api, 2):
        kept = after[1:]
        assert not kept or kept[0]["role"] == "assistant", (
            f"rule 2: the kept rounds must start with a reply of the model; they start with a "
            f"{kept[0]['role']} message ({shown(kept[:1])}), whose calls were dropped"
        )
        for at in range(0, len(kept), 2):
            reply = kept[at]
            answer = kept[at + 1] if at + 1 < len(kept) else {"content": []}
            answered = [block["tool_use_id"] for block in answer["content"]
                        if block["type"] == "tool_result"]
            assert answered == calls_of(reply["content"]), (
                f"rule 2: a kept reply must be followed by the message with its results; the "
                f"calls {calls_of(reply['content'])} are followed by the results {answered}"
            )


def test_rule3_a_kept_reply_goes_back_as_it_came_thinking_included(
    scripted_api, make_agent, tmp_path
):
    agent = make_agent(COMPACT_AT=1)
    rounds = keep_rounds(agent, 3)
    play(scripted_api, agent, tmp_path, [reading(n) for n in range(1, rounds + 2)])
    for replies, after in compactions(scripted_api, 3):
        for message in after[1:]:
            if message["role"] == "assistant":
                assert message["content"] in replies, (
                    "rule 3: a kept reply must go back exactly as the model sent it, its signed "
                    f"thinking blocks included; it went back as: {shown([message])}"
                )


def test_rule4_v5_still_keeps_its_survivors_and_the_summary_request_reads_the_cache(
    scripted_api, make_agent, tmp_path
):
    (tmp_path / "big.txt").write_text("the deploy key is K-7731\n" * 400)  # past the minimum
    agent = make_agent(COMPACT_AT=1)
    keep_rounds(agent, 4)
    big = {"tool_calls": [{"name": "read_file", "input": {"path": "big.txt"}}]}
    play(scripted_api, agent, tmp_path, [big, reading(2), reading(3)])
    requests = scripted_api.requests
    for number, request in enumerate(requests[:-1]):
        if request.track == "default":
            continue
        cached = {prompt_size(earlier) for earlier in requests[:number]
                  if earlier.track == "default"}
        read = (request.reply["body"].get("usage") or {}).get("cache_read_input_tokens", 0)
        assert read in cached and read > 0, (
            f"rule 4: the summary request must send the same system prompt and tools and a "
            f"history an earlier request sent (cached: {sorted(cached)} tokens), one question "
            f"appended, so that it reads it from the cache; it read {read:,} tokens"
        )
        first = requests[number + 1].body["messages"][0]
        texts = " ".join(block.get("text", "") for block in first["content"])
        assert f"The user's latest request:\n{TASK}" in texts, (
            "rule 4: the first message after a compaction must still hold what v5 keeps word "
            f"for word (what_must_survive()); it holds: {texts[:300]!r}"
        )
