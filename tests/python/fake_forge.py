"""Fake `gh` and `curl` for the pull-request CI templates' jobs, as ci_jobs.py runs them:

    fake_forge.py gh api …      GitHub's REST API: issue comments, a pull request, the user
    fake_forge.py curl …        GitLab's REST API v4: merge-request notes, the user

They answer as the real ones do, for the arguments the templates use and no others (anything
else is an error, exit 99, so a template that calls them differently fails its test). The
server's state is the JSON file $FAKE_FORGE_STATE, read and written by every call:

    {"next_id": N,
     "threads": {thread: [comment, …]},   "repos/OWNER/REPO/issues/N" or
                                          "projects/ID/merge_requests/IID"
     "users": {token: user},              who each token acts as: the author of what it writes
     "pulls": {"repos/OWNER/REPO/pulls/N": pull request}}

A GitHub user of "type" "Bot" is an installation token's (GITHUB_TOKEN's): GET /user refuses
it, as GitHub does. GitLab lets a token edit only its own user's notes (a Reporter's rights).
Every call is appended to $FAKE_FORGE_LOG as one JSON line: {"tool", "argv", "method", "path",
"body"} (body: the comment text sent, or null).
"""

from __future__ import annotations

import json
import os
import re
import sys


def unsupported(why: str) -> None:
    print(f"fake {sys.argv[1]}: {why}: {sys.argv[2:]}", file=sys.stderr)
    sys.exit(99)


def load() -> dict:
    with open(os.environ["FAKE_FORGE_STATE"]) as f:
        return json.load(f)


def save(state: dict) -> None:
    with open(os.environ["FAKE_FORGE_STATE"], "w") as f:
        json.dump(state, f, indent=1)


def log(tool: str, method: str, path: str, body: str | None) -> None:
    with open(os.environ["FAKE_FORGE_LOG"], "a") as f:
        f.write(json.dumps({"tool": tool, "argv": sys.argv[2:], "method": method, "path": path,
                            "body": body}) + "\n")


def find(state: dict, prefix: str, comment_id: int) -> dict | None:
    return next((c for thread, comments in state["threads"].items()
                 if thread.startswith(prefix) for c in comments if c["id"] == comment_id), None)


def serve(state: dict, method: str, path: str, body: str | None, thread_re: str,
          comment_re: str, make, may_edit) -> tuple[int, object]:
    """(HTTP status, response) of a list, create or update of comments on a thread."""
    thread = re.fullmatch(thread_re, path)
    one = re.fullmatch(comment_re, path)
    if thread and method == "GET":
        return 200, state["threads"].get(thread[1], [])
    if thread and method == "POST" and body is not None:
        comment = make(state["next_id"], thread[1], body)
        state["next_id"] += 1
        state["threads"].setdefault(thread[1], []).append(comment)
        return 201, comment
    if one and method in ("PATCH", "PUT") and body is not None:
        comment = find(state, one[1], int(one[2]))
        if comment is None:
            return 404, {"message": "Not Found"}
        if not may_edit(comment):
            return 403, {"message": "403 Forbidden"}
        comment["body"] = body
        return 200, comment
    unsupported(f"no {method} {path} here")
    raise AssertionError


# --- gh api ---

JQ_SELECT = re.compile(r'\.\[\] \| select\(\.user\.login == "([^"\\]*)" and '
                       r'\(\.body \| startswith\("([^"\\]*)"\)\)\) \| \.id')
JQ_PATHS = re.compile(r"\.\w+(\.\w+)*(, \.\w+(\.\w+)*)*")


def jq(expression: str, doc) -> list:
    """The filters the templates use: the ids of one author's comments whose body starts with
    a text, or paths like `.a.b, .c` (a path through null is null)."""
    found = JQ_SELECT.fullmatch(expression)
    if found:
        return [c["id"] for c in doc
                if c["user"]["login"] == found[1] and c["body"].startswith(found[2])]
    if JQ_PATHS.fullmatch(expression):
        values = []
        for path in expression.split(", "):
            value = doc
            for key in path[1:].split("."):
                value = None if value is None else value[key]
            values.append(value)
        return values
    unsupported(f"--jq {expression!r} is not a filter this fake knows")
    raise AssertionError


def gh(args: list[str]) -> int:
    if args[:1] != ["api"]:
        unsupported("only `gh api`")
    method, endpoint, expression, fields = None, None, None, {}
    rest = args[1:]
    while rest:
        arg = rest.pop(0)
        if arg in ("-X", "--method"):
            method = rest.pop(0)
        elif arg == "--paginate":
            pass   # one page here
        elif arg in ("-q", "--jq"):
            expression = rest.pop(0)
        elif arg in ("-F", "--field"):
            key, value = rest.pop(0).split("=", 1)
            if value.startswith("@"):   # gh reads the value from that file
                with open(value[1:]) as f:
                    value = f.read()
            fields[key] = value
        elif arg.startswith("-") or endpoint is not None:
            unsupported(f"argument {arg!r}")
        else:
            endpoint = arg
    token = os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN")
    if not token:
        print("gh: To use GitHub CLI in a GitHub Actions workflow, set the GH_TOKEN environment "
              "variable. Example:\n  env:\n    GH_TOKEN: ${{ github.token }}", file=sys.stderr)
        return 4
    if endpoint is None or set(fields) - {"body"}:
        unsupported("an endpoint and at most a body field")
    method = method or ("POST" if fields else "GET")
    body = fields.get("body")
    log("gh", method, endpoint, body)
    state = load()
    repo = os.environ["FAKE_FORGE_REPOSITORY"]
    user = state["users"].get(token)

    def make(comment_id: int, thread: str, body: str) -> dict:
        number = thread.rsplit("/", 1)[1]
        return {"id": comment_id, "body": body,
                "user": {"login": user["login"], "type": user["type"]},
                "html_url": f"https://github.com/{repo}/pull/{number}#issuecomment-{comment_id}"}

    if user is None:
        status, doc = 401, {"message": "Bad credentials"}
    elif endpoint == "user" and method == "GET":
        status, doc = ((403, {"message": "Resource not accessible by integration"})
                       if user["type"] == "Bot" else (200, user))
    elif re.fullmatch(rf"repos/{re.escape(repo)}/pulls/\d+", endpoint) and method == "GET":
        pull = state["pulls"].get(endpoint)
        status, doc = (200, pull) if pull else (404, {"message": "Not Found"})
    else:
        status, doc = serve(state, method, endpoint, body,
                            rf"(repos/{re.escape(repo)}/issues/\d+)/comments",
                            rf"(repos/{re.escape(repo)})/issues/comments/(\d+)", make,
                            lambda comment: True)   # pull-requests: write edits any comment
    if status >= 400:
        print(f"gh: {doc['message']} (HTTP {status})", file=sys.stderr)
        return 1
    save(state)
    for value in (jq(expression, doc) if expression else [doc]):
        print(value if isinstance(value, str) else json.dumps(value))   # null as `null`
    return 0


# --- curl ---

def gitlab_page(notes: list, query: str) -> list:
    """One page of a listing as GitLab gives it: newest first unless sort=asc, 20 a page unless
    per_page says (at most 100), the page-th (from 1)."""
    known = {"sort": ("asc", "desc"), "per_page": None, "page": None}
    params = dict(pair.split("=", 1) for pair in query.split("&") if pair)
    if set(params) - set(known) or params.get("sort", "desc") not in known["sort"]:
        unsupported(f"the query {query!r}")
    if params.get("sort", "desc") == "desc":
        notes = notes[::-1]
    size = min(int(params.get("per_page", 20)), 100)
    start = (int(params.get("page", 1)) - 1) * size
    return notes[start:start + size]


def curl(args: list[str]) -> int:
    method, url, headers, fields, fail = None, None, [], {}, False
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in ("-s", "-S", "-sS", "--silent", "--show-error"):
            pass
        elif arg in ("-f", "--fail"):
            fail = True
        elif arg in ("-H", "--header"):
            headers.append(rest.pop(0))
        elif arg in ("-X", "--request"):
            method = rest.pop(0)
        elif arg == "--data-urlencode":
            spec = rest.pop(0)   # name@file (its content) or name=content
            name, sep, value = re.match(r"([^=@]*)([=@])(.*)", spec, re.S).groups()
            if sep == "@":
                with open(value) as f:
                    value = f.read()
            fields[name] = value
        elif arg.startswith("-") or url is not None:
            unsupported(f"argument {arg!r}")
        else:
            url = arg
    if url is None or set(fields) - {"body"}:
        unsupported("a URL and at most a body field")
    method = method or ("POST" if fields else "GET")
    body = fields.get("body")
    api = os.environ["FAKE_FORGE_API"]
    if not url.startswith(api + "/"):
        unsupported(f"{url} is not under {api}")
    path = url[len(api) + 1:].split("?")[0]
    log("curl", method, url[len(api) + 1:], body)
    state = load()
    tokens = [h.split(": ", 1)[1] for h in headers if h.startswith("PRIVATE-TOKEN: ")]
    user = state["users"].get(tokens[0]) if len(tokens) == 1 else None
    if user is None:
        status, doc = 401, {"message": "401 Unauthorized"}
    elif path == "user" and method == "GET":
        status, doc = 200, user
    else:
        author = {"id": user["id"], "username": user["username"]}

        def make(note_id: int, thread: str, body: str) -> dict:
            return {"id": note_id, "body": body, "author": author, "system": False,
                    "noteable_type": "MergeRequest"}

        status, doc = serve(state, method, path, body,
                            r"(projects/\d+/merge_requests/\d+)/notes",
                            r"(projects/\d+/merge_requests/\d+)/notes/(\d+)", make,
                            lambda note: note["author"]["id"] == user["id"])
        if status < 400:
            save(state)
            if method == "GET":
                doc = gitlab_page(doc, url.partition("?")[2])
    if status >= 400 and fail:
        print(f"curl: (22) The requested URL returned error: {status}", file=sys.stderr)
        return 22
    print(json.dumps(doc), end="")
    return 0


if __name__ == "__main__":
    tool = sys.argv[1]
    sys.exit(gh(sys.argv[2:]) if tool == "gh" else curl(sys.argv[2:]))
