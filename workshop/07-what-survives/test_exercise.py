"""Exercise 7: what survives a compaction. v5 keeps a summary and a few facts word for word; here
the last KEEP_ROUNDS rounds of the conversation survive too, as they were sent. The task is in
README.md.

The scripted model works in rounds: a reply of the model (its thinking, a note, one or two
read_file calls) and the message that answers it (the results). Every test watches the same four
rounds, four_rounds(). With COMPACT_AT=1 every round passes the threshold, so the agent compacts
after each one: a summary track answers the summary question wherever it comes. A test's name
starts with the number of the rule it checks (test_rule3_... checks rule 3 of README.md), and its
failure says what is missing.
"""

from pathlib import Path

SUMMARY = "We read the notes, one round at a time."
TASK = "Read the notes."
ANSWER = "Done."


def reading(folder: Path, *notes: int) -> dict:
    """A round of the model: it thinks, notes what it does, and reads these notes, one read_file
    call each. The notes are written in the folder first."""
    for note in notes:
        (folder / f"note{note}.txt").write_text(f"note {note}\n")
    calls = [{"name": "read_file", "input": {"path": f"note{note}.txt"}} for note in notes]
    return {"thinking": f"Next: {len(notes)} note(s).", "text": f"Reading note(s) {notes}.",
            "tool_calls": calls}


def four_rounds(api, make_agent, tmp_path, rule: int) -> tuple[int, list, list, object]:
    """The conversation every rule watches: four rounds that read six notes, one or two at a
    time (a round of two calls has two results), a compaction after each, then the answer.
    Returns run_turn's exit code, the history it leaves, the compactions, and the agent."""
    agent = make_agent(COMPACT_AT=1)
    keep_rounds(agent, rule)
    rounds = [reading(tmp_path, 1), reading(tmp_path, 2, 3), reading(tmp_path, 4, 5),
              reading(tmp_path, 6)]
    summaries = {"match": "Write a summary of the work so far", "in": "last",
                 "turns": [{"text": SUMMARY, "repeat": len(rounds)}]}
    api.play({"turns": [*rounds, {"text": ANSWER}], "tracks": [summaries]})
    history = []
    code = agent.run_turn(history, TASK)
    return code, history, compactions(api, rule), agent


def keep_rounds(agent, rule: int) -> None:
    assert getattr(agent, "KEEP_ROUNDS", None) == 2, (
        f"rule {rule}: the script needs KEEP_ROUNDS = 2 (a number of rounds)"
        + (" (rule 1) before this rule can be checked" if rule != 1 else "")
    )


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


def results_of(content: list) -> list[str]:
    return [block["tool_use_id"] for block in content if block["type"] == "tool_result"]


def files_read(content: list) -> list[str]:
    return [block["input"]["path"] for block in content if block["type"] == "tool_use"]


def shown(messages: list) -> str:
    """A history in one line a message: its role and the types of its blocks."""
    return "; ".join(
        f"{message['role']}: {', '.join(block['type'] for block in message['content'])}"
        for message in messages
    ) or "nothing"


def prompt_size(request) -> int:
    """What an answered request sent, in tokens, the cache included."""
    usage = request.reply["body"]["usage"]
    return sum(usage.values()) - usage["output_tokens"]


def test_rule1_the_last_rounds_come_after_the_summary_in_order(
    scripted_api, make_agent, tmp_path
):
    _, _, done, _ = four_rounds(scripted_api, make_agent, tmp_path, 1)
    # after each compaction, the notes the kept replies read: every round while there are fewer
    # than two, then the last two, oldest first
    kept_reads = [
        [["note1.txt"]],
        [["note1.txt"], ["note2.txt", "note3.txt"]],
        [["note2.txt", "note3.txt"], ["note4.txt", "note5.txt"]],
        [["note4.txt", "note5.txt"], ["note6.txt"]],
    ]
    for number, (replies, after) in enumerate(done, 1):
        first = after[0]["content"][0]
        assert first["type"] == "text" and first["text"].startswith("<summary>"), (
            f"rule 1: the summary must come first, but the history starts: {shown(after[:1])}"
        )
        kept = [message["content"] for message in after[1:] if message["role"] == "assistant"]
        expected, read = kept_reads[number - 1], [files_read(content) for content in kept]
        assert read == expected, (
            f"rule 1: after compaction {number}, the summary must be followed by the last two "
            f"rounds (all there are, if fewer), oldest first: the replies that read {expected}; "
            f"it is followed by {shown(after[1:])}, whose replies read {read}"
        )
        expected = [calls_of(reply) for reply in replies[-2:]]
        assert [calls_of(content) for content in kept] == expected, (
            f"rule 1: after compaction {number}, the summary must be followed by the last "
            f"{len(expected)} round(s), in order (the replies that made the calls {expected})"
        )


def test_rule2_each_kept_reply_comes_with_its_results_and_no_result_without_its_call(
    scripted_api, make_agent, tmp_path
):
    code, history, done, _ = four_rounds(scripted_api, make_agent, tmp_path, 2)
    for _, after in done:
        kept = after[1:]
        assert not kept or kept[0]["role"] == "assistant", (
            f"rule 2: the kept rounds must start with a reply of the model; they start with a "
            f"{kept[0]['role']} message ({shown(kept[:1])}), whose calls were dropped"
        )
        calls = [calls_of(message["content"]) for message in kept[0::2]]
        answered = [results_of(message["content"]) for message in kept[1::2]]
        assert answered == calls, (
            f"rule 2: a kept reply must be followed by the message with its results; the kept "
            f"replies made the calls {calls}, the messages after them hold the results of "
            f"{answered}"
        )
    # whole rounds are what the API takes: only then does the turn go on to the answer
    rounds = 4
    assert len(done) == rounds, (
        f"rule 2: the agent must compact after each of the {rounds} rounds and go on; it "
        f"compacted {len(done)} time(s)"
    )
    assert code == 0, f"rule 2: the turn did not go on after a compaction (exit code {code})"
    last = history[-1]
    answer = [block.text for block in last["content"]] if last["role"] == "assistant" else []
    assert answer == [ANSWER], (
        f"rule 2: the turn must end with the model's answer, {ANSWER!r}, after the kept rounds; "
        f"the history ends with a {last['role']} message, whose text is {answer}"
    )


def test_rule3_a_kept_reply_goes_back_as_it_came_thinking_included(
    scripted_api, make_agent, tmp_path
):
    _, _, done, _ = four_rounds(scripted_api, make_agent, tmp_path, 3)
    for replies, after in done:
        for message in after[1:]:
            if message["role"] == "assistant":
                assert message["content"] in replies, (
                    "rule 3: a kept reply must go back exactly as the model sent it, its signed "
                    f"thinking blocks included; it went back as: {shown([message])}"
                )


def test_rule4_v5_still_keeps_its_survivors_and_the_summary_request_reads_the_cache(
    scripted_api, make_agent, tmp_path
):
    _, _, _, agent = four_rounds(scripted_api, make_agent, tmp_path, 4)
    survivors = agent.what_must_survive()  # the same all along: no todo, skill or file changed
    requests = scripted_api.requests
    last_sent = None  # the last request of the conversation before this one: what it cached
    for number, request in enumerate(requests[:-1]):
        if request.track == "default":
            if request.reply["status"] == 200:
                last_sent = request
            continue
        refusal = (request.reply["body"].get("error") or {}).get("message", "")
        assert request.reply["status"] == 200, (
            "rule 4: the summary request must be the history as the request before it sent it, "
            f"one question appended; the API refused it ({request.reply['status']}): {refusal}"
        )
        cached = prompt_size(last_sent) if last_sent else 0
        read = (request.reply["body"].get("usage") or {}).get("cache_read_input_tokens", 0)
        assert read == cached, (
            f"rule 4: the summary request must send the same system prompt and tools and the "
            f"history as the request before it sent it ({cached:,} tokens, cached), one question "
            f"appended, so that it reads all of it from the cache; it read {read:,} tokens"
        )
        first = requests[number + 1].body["messages"][0]
        texts = [block["text"] for block in first["content"] if block["type"] == "text"]
        assert f"The user's latest request:\n{TASK}" in survivors and survivors in texts[1:], (
            "rule 4: the first message after a compaction must still hold what v5 keeps word "
            f"for word, what_must_survive() in a block of its own after the summary; it holds: "
            f"{texts}"
        )
