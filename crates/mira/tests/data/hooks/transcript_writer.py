"""Writes Claude Code session transcripts in the client's JSONL form, for the hook tests.

A session is written the way Claude Code records one: a record per line with `type`, `uuid`,
`parentUuid`, `sessionId`, `cwd`, `gitBranch`, `version`, `timestamp`, `isSidechain`,
`userType`; user records carry the typed text or `tool_result` blocks (with `toolUseResult`);
assistant records carry one content block each (`thinking`, `text`, `tool_use`) with the API
message's `id`, `model`, `stop_reason` and `usage`; and the records that are not the
conversation (summaries, file-history snapshots, system and progress records, `isMeta`
caveats, slash commands and their output, sub-agent records, interruptions).

`session_dev.py` and `session_heldout.py` describe the two sessions with this writer; run
`python3 transcript_writer.py` here to write `session-dev.jsonl` and `session-heldout.jsonl`.
"""

import datetime
import json
import uuid


class Session:
    def __init__(self, session_id, cwd, branch, start, seed):
        self.session_id = session_id
        self.cwd = cwd
        self.branch = branch
        self.t = datetime.datetime.fromisoformat(start)
        self.lines = []
        self.parent = None
        self.n = 0
        self.seed = seed
        self.message = None

    def _uuid(self):
        self.n += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{self.seed}/{self.n}"))

    def _tick(self, seconds):
        self.t += datetime.timedelta(seconds=seconds)
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def _record(self, kind, body, seconds=2, **extra):
        u = self._uuid()
        rec = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.session_id,
            "version": "2.1.17",
            "gitBranch": self.branch,
            "type": kind,
        }
        rec.update(body)
        rec["uuid"] = u
        rec["timestamp"] = self._tick(seconds)
        rec.update(extra)
        self.lines.append(rec)
        self.parent = u
        return rec

    # What the user does.
    def user(self, text, seconds=40):
        self.message = None
        return self._record("user", {"message": {"role": "user", "content": text}}, seconds)

    def user_blocks(self, text, seconds=30):
        self.message = None
        blocks = [{"type": "text", "text": text}]
        return self._record("user", {"message": {"role": "user", "content": blocks}}, seconds)

    def meta(self, text):
        self._record("user", {"message": {"role": "user", "content": text}}, 1, isMeta=True)

    def slash(self, name, stdout):
        self.user(f"<command-name>{name}</command-name>\n<command-message>{name.strip('/')}</command-message>\n<command-args></command-args>", 5)
        self.user(f"<local-command-stdout>{stdout}</local-command-stdout>", 1)

    def interrupt(self):
        self.user("[Request interrupted by user]", 2)

    # What the assistant does.
    def _assistant(self, block, seconds):
        if self.message is None:
            self.message = "msg_" + self._uuid().replace("-", "")[:24]
        body = {
            "message": {
                "id": self.message,
                "type": "message",
                "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [block],
                "stop_reason": "tool_use" if block["type"] == "tool_use" else None,
                "stop_sequence": None,
                "usage": {"input_tokens": 4, "cache_creation_input_tokens": 812,
                          "cache_read_input_tokens": 21034, "output_tokens": 96},
            },
            "requestId": "req_" + self.message[4:],
        }
        return self._record("assistant", body, seconds)

    def think(self, text):
        self._assistant({"type": "thinking", "thinking": text, "signature": "c2lnbmF0dXJl"}, 3)

    def say(self, text, seconds=4):
        self._assistant({"type": "text", "text": text}, seconds)

    def tool(self, name, tool_input, output, error=False, result=None, seconds=3):
        tid = "toolu_" + self._uuid().replace("-", "")[:22]
        self._assistant({"type": "tool_use", "id": tid, "name": name, "input": tool_input}, 2)
        block = {"tool_use_id": tid, "type": "tool_result", "content": output}
        if error:
            block["is_error"] = True
        body = {"message": {"role": "user", "content": [block]}}
        if result is not None:
            body["toolUseResult"] = result
        self._record("user", body, seconds)
        self.message = None

    def bash(self, command, output, error=False, seconds=6):
        text = output if not error else output
        self.tool("Bash", {"command": command, "description": "Run " + command.split()[0]},
                  text, error,
                  {"stdout": output, "stderr": "", "interrupted": False, "isImage": False},
                  seconds)

    def read(self, path, content):
        numbered = "\n".join(f"{i + 1:>6}\u2192{line}" for i, line in enumerate(content.split("\n")))
        self.tool("Read", {"file_path": path}, numbered,
                  result={"type": "text", "file": {"filePath": path, "content": content}})

    def grep(self, pattern, output, path=None):
        inp = {"pattern": pattern, "output_mode": "content", "-n": True}
        if path:
            inp["path"] = path
        self.tool("Grep", inp, output)

    def glob(self, pattern, output):
        self.tool("Glob", {"pattern": pattern}, output)

    def edit(self, path, old, new):
        self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                  f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n     1\u2192{new}",
                  result={"filePath": path, "oldString": old, "newString": new})

    def failed_edit(self, path, old, new):
        self.tool("Edit", {"file_path": path, "old_string": old, "new_string": new},
                  "<tool_use_error>String to replace not found in file.\nString: " + old + "</tool_use_error>",
                  error=True)

    def write(self, path, content):
        self.tool("Write", {"file_path": path, "content": content},
                  f"File created successfully at: {path}",
                  result={"type": "create", "filePath": path, "content": content})

    def todo(self, items):
        self.tool("TodoWrite", {"todos": [{"content": c, "status": s, "activeForm": c} for c, s in items]},
                  "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.")

    # Records that are not the conversation.
    def summary(self, text):
        self.lines.append({"type": "summary", "summary": text, "leafUuid": self.parent or "none"})

    def snapshot(self):
        self.lines.append({"type": "file-history-snapshot", "messageId": self._uuid(),
                           "snapshot": {"messageId": self.parent, "trackedFileBackups": {},
                                        "timestamp": self._tick(0)}, "isSnapshotUpdate": False})

    def system(self, text):
        self._record("system", {"subtype": "informational", "content": text, "level": "info"}, 1)

    def sidechain(self, prompt, answer):
        for kind, content in (("user", prompt), ("assistant", [{"type": "text", "text": answer}])):
            rec = self._record(kind, {"message": {"role": kind, "content": content}}, 3)
            rec["isSidechain"] = True
            rec["agentId"] = "a1b2c3d4"

    def repeat_last(self):
        """Claude Code may write a record again (after a compaction); it keeps its uuid."""
        self.lines.append(dict(self.lines[-1]))

    def save(self, path):
        with open(path, "w", encoding="utf-8") as f:
            for rec in self.lines:
                f.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    import session_dev
    import session_heldout

    session_dev.build().save("session-dev.jsonl")
    session_heldout.build().save("session-heldout.jsonl")
