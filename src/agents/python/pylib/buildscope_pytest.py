"""Buildscope's pytest plugin: records a pytest session as a `pybuild` build.

Enable it with ``pytest -p buildscope_pytest`` (this directory on PYTHONPATH), or install it into a
virtual environment with ``npx buildscope agent python --install`` (then pytest loads it by
itself). Settings come from the environment (BUILDSCOPE_SERVER, BUILDSCOPE_ACCESS_KEY,
BUILDSCOPE_SPOOL_DIR, BUILDSCOPE_TIMEOUT_MS, BUILDSCOPE_REDACT, BUILDSCOPE_TAGS,
BUILDSCOPE_VALUES), then the agent's file (agent.properties in BUILDSCOPE_AGENT_DIR or ~/.buildscope),
as agents/agent-contract.json says for every agent,
and builds that cannot be sent go to the spool every Buildscope agent shares, as for every agent.

The plugin never fails or slows a test run: every error is swallowed, the build is sent once at
the end with a short timeout, and when the server cannot be reached it is spooled and sent with
the next build. Environment variables are read to recognise a CI, never sent. Standard library only.
"""

import json
import os
import re
import sys
import time

# getpass, locale, platform, secrets, socket, subprocess and urllib are imported where they are
# used: importing urllib alone costs tens of milliseconds, and a test run that sends its build in
# the background never needs it.

AGENT_NAME = "buildscope_pytest"
_VERIFICATION = "verification"
_NON_VERIFICATION = "non-verification"


def _now_ms():
    return int(time.time() * 1000)


# ---- the contract every agent shares ----------------------------------------------------------
# agents/agent-contract.json (`agent python --install` puts a copy next to this module): the build
# ID, the settings and their order, the redaction words, CI detection, tag and value names. The
# functions below read it by the same rules as src/agents/contract.ts (the conformance table,
# test/agents/fixtures/conformance-cases.json, runs them).

_CONTRACT = None


def _shipped_file(installed_name, repository_path):
    """A data file of the package: the copy installed next to this module, else the package's own."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, installed_name), os.path.join(here, "..", "..", "..", "..", repository_path)):
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                return json.load(f)
    # Without its rules the plugin sends nothing rather than something it was not meant to.
    raise RuntimeError("%s is missing" % installed_name)


def _contract():
    global _CONTRACT
    if _CONTRACT is None:
        _CONTRACT = _shipped_file(AGENT_NAME + "_contract.json", os.path.join("agents", "agent-contract.json"))
    return _CONTRACT


def _is_build_id(s):
    """Whether s is a build ID by the contract: its length, of its alphabet's characters only."""
    spec = _contract()["buildId"]
    return len(s) == spec["length"] and all(c in spec["alphabet"] for c in s)


def _spooled_build(name, suffixes=(".ndjson",)):
    """The build ID of a spool file named <id><suffix>, or None."""
    for suffix in suffixes:
        if name.endswith(suffix) and _is_build_id(name[: -len(suffix)]):
            return name[: -len(suffix)]
    return None


def _new_build_id():
    import secrets

    spec = _contract()["buildId"]
    alphabet, length = spec["alphabet"], spec["length"]
    limit = 256 - 256 % len(alphabet)  # bytes at or above it would favour some characters
    out = ""
    while len(out) < length:
        b = secrets.randbits(8)
        if b < limit:
            out += alphabet[b % len(alphabet)]
    return out


def _trimmed(value):
    value = (value or "").strip()
    return value or None


def _setting(name, sources):
    """The first source, in the contract's order, that sets the key (sources: systemProperty, environment, file)."""
    settings = _contract()["settings"]
    key = settings["keys"][name]
    for source in settings["order"]:
        if source in key:
            value = _trimmed(sources.get(source, {}).get(key[source]))
            if value is not None:
                return value
    return None


def _list(text):
    return [v.strip() for v in (text or "").split(",") if v.strip()]


def _values(sources):
    """The user's named values, merged key by key (the first source in the contract's order wins), sorted by key."""
    settings = _contract()["settings"]
    key = settings["keys"]["values"]
    merged = {}
    for source in reversed(settings["order"]):
        given = sources.get(source, {})
        if source == "environment":
            for pair in (given.get(key["environment"]) or "").split(";"):
                k, eq, v = pair.partition("=")
                if eq and k.strip():
                    merged[k.strip()] = v.strip()
        else:
            prefix = key["filePrefix"] if source == "file" else key["systemPropertyPrefix"]
            for k, v in given.items():
                if k.startswith(prefix) and len(k) > len(prefix) and v is not None:
                    merged[k[len(prefix) :]] = v.strip()
    return sorted(merged.items())


def _redacted_words(sources):
    """The redaction words in effect, canonical, in the contract's order; aliases and any case accepted."""
    redaction = _contract()["redaction"]
    given = set(w for w in re.split(r"[\s,]+", (_setting("redact", sources) or "").lower()) if w)
    return [w["word"] for w in redaction["words"] if redaction["all"] in given or any(a.lower() in given for a in [w["word"]] + w["aliases"])]


def _fields_left_out(words):
    return set(f for w in _contract()["redaction"]["words"] if w["word"] in words for f in w["leavesOut"])


def _is_set(env, detect):
    value = _trimmed(env.get(detect["variable"]))
    if value is None:
        return False
    return value == detect["equals"] if "equals" in detect else value.lower() != "false"


def _fill(template, env):
    missing = []

    def one(m):
        value = _trimmed(env.get(m.group(1)))
        if value is None:
            missing.append(m.group(1))
        return value or ""

    out = re.sub(r"\{([A-Z0-9_]+)\}", one, template)
    return None if missing else out


def _detect_ci(env):
    """The CI this session runs on ({provider, buildUrl, branch}, each when known), or None."""
    ci = _contract()["ci"]
    for p in ci["providers"]:
        if any(_is_set(env, d) for d in p["detect"]):
            out = {"provider": p["name"]}
            url = next((u for u in (_fill(t, env) for t in p["buildUrl"]) if u), None)
            branch = next((b for b in (_trimmed(env.get(v)) for v in p["branch"]) if b), None)
            if url:
                out["buildUrl"] = url
            if branch:
                out["branch"] = branch
            return out
    return {} if any(_is_set(env, d) for d in ci["generic"]["detect"]) else None


def _os_tag():
    import platform

    return _contract()["operatingSystemTags"].get(sys.platform, platform.system() or sys.platform)


def _agent_context(sources, agent_dir):
    """Everything the contract decides from the settings alone (contract.ts agentContext)."""
    c = _contract()
    access_key = _setting("accessKey", sources)
    ci = _detect_ci(sources.get("environment", {}))
    values = []
    if ci and ci.get("provider"):
        values.append((c["values"]["ciProvider"], ci["provider"]))
    if ci and ci.get("buildUrl"):
        values.append((c["values"]["ciBuild"], ci["buildUrl"]))
    server = _setting("server", sources)
    return {
        "server": server.rstrip("/") if server else None,
        "accessKey": access_key,
        "spoolDir": _setting("spoolDir", sources) or os.path.join(agent_dir, "spool"),
        "redact": _redacted_words(sources),
        "redactValues": _list(_setting("redactValues", sources)) + ([access_key] if access_key else []),
        "tags": [c["tags"]["ci"] if ci is not None else c["tags"]["local"], _os_tag()] + _list(_setting("tags", sources)),
        "values": values + _values(sources),
        "ciBranch": ci.get("branch") if ci else None,
    }


def _agent_version():
    here = os.path.dirname(os.path.abspath(__file__))
    for up in (os.path.join(here, "..", "..", "..", ".."), here):
        try:
            with open(os.path.join(up, "package.json"), encoding="utf-8") as f:
                data = json.load(f)
            if data.get("name") == "buildscope":
                return str(data.get("version", "unknown"))
        except (OSError, ValueError):
            pass
    return os.environ.get("BUILDSCOPE_AGENT_VERSION", "unknown")


def _properties(path):
    """The keys of a Java properties file, as the JVM agents read it (the subset of the format that
    settings use: one `key=value`, `key: value` or `key value` per line, `#` and `!` comments)."""
    out = {}
    try:
        with open(path, encoding="utf-8") as f:
            for raw in f:
                line = raw.strip()
                if not line or line[0] in "#!":
                    continue
                cut = min((i for i in (line.find("="), line.find(":"), line.find(" ")) if i >= 0), default=len(line))
                key, value = line[:cut].strip(), line[cut + 1 :].strip()
                if value[:1] in ("=", ":"):
                    value = value[1:].strip()
                out[key] = value
    except OSError:
        pass
    return out


def _agent_dir(env):
    spec = _contract()["settings"]["agentDir"]
    home = env.get("HOME") or os.path.expanduser("~")
    return _trimmed(env.get(spec["environment"])) or os.path.join(home, ".buildscope")


def _settings(env):
    """The settings every Buildscope agent reads, in the contract's order (src/agents/settings.ts)."""
    agent_dir = _agent_dir(env)
    config_file = os.path.join(agent_dir, _contract()["settings"]["file"])
    from_file = _properties(config_file)
    context = _agent_context({"environment": env, "file": from_file}, agent_dir)
    try:
        timeout = float(env.get("BUILDSCOPE_TIMEOUT_MS", "5000")) / 1000.0
    except ValueError:
        timeout = 5.0
    return {
        "server": context["server"],
        "access_key": context["accessKey"],
        "spool_dir": context["spoolDir"],
        "timeout": timeout if timeout > 0 else 5.0,
        "redact_values": context["redactValues"],
        "context": context,
        "warning": _config_file_warning(config_file),
        "test_output": _switched_on(_setting("testOutput", {"environment": env, "file": from_file})),
        "console_output": _switched_on(_setting("consoleOutput", {"environment": env, "file": from_file})),
    }


def _switched_on(value):
    """A capture switch (testOutput): on unless set to one of the contract's off words."""
    return value is None or value.lower() not in _contract()["settings"]["switches"]["off"]


def _bound(name):
    return int(_contract()["bounds"][name])


def _reachable(server, timeout):
    """Whether the server's host takes a connection now: the background sender's link is printed only then."""
    import socket
    from urllib.parse import urlsplit

    try:
        u = urlsplit(server)
        port = u.port or (443 if u.scheme == "https" else 80)
        socket.create_connection((u.hostname, port), timeout=timeout).close()
        return True
    except Exception:
        return False


def identity_of(nodeid):
    """suite, name and parameters of a test by its node ID: 'tests/test_a.py::TestA::test_x[1-2]' is
    ('tests/test_a.py::TestA', 'test_x', '1-2')."""
    head, params = nodeid, None
    # The parameters start at the first '[' after a '::' (they may hold '::' themselves).
    bracket = nodeid.find("[")
    if bracket >= 0 and nodeid.endswith("]") and "::" in nodeid[:bracket]:
        head, params = nodeid[:bracket], nodeid[bracket + 1 : -1]
    parts = head.split("::")
    suite = "::".join(parts[:-1]) if len(parts) > 1 else parts[0]
    return suite, parts[-1], params


_EXCEPTION_TYPE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*): ")


def failure_of(longrepr_text, crash_message):
    """A failed test's failure: the exception's type and message from pytest's crash line, and the
    start of its report (the traceback pytest prints) as the stack trace."""
    text = longrepr_text or ""
    message = crash_message or (text.strip().splitlines()[-1] if text.strip() else "failed")
    out = {}
    m = _EXCEPTION_TYPE.match(message)
    if m and not m.group(1)[0].islower():
        out["type"] = m.group(1)
        message = message[m.end() :]
    else:
        # A plain assert's crash line is the assertion alone; the report ends with 'file:line: Type'.
        last = re.search(r":\d+: ([A-Za-z_][A-Za-z0-9_.]*)\s*$", text)
        if last:
            out["type"] = last.group(1)
    out["message"] = message[: _bound("messageChars")]
    if text:
        out["stackTrace"] = text[: _bound("stackTraceChars")]
    return out


def skip_reason_of(longrepr):
    """The reason of a skip: pytest's report holds (path, line, 'Skipped: reason')."""
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
        return reason[len("Skipped: ") :] if reason.startswith("Skipped: ") else reason
    return None


def _config_file_warning(path):
    """The line every agent prints (and goes on) when agent.properties, which holds an access key,
    can be read by its group or by others (src/agents/settings.ts configFileWarning)."""
    if os.name != "posix":
        return None
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        return None
    if mode & 0o077 == 0:
        return None
    return "Buildscope: %s can be read by other users (mode %04o); it holds an access key: chmod 600 it" % (path, mode)


# ---- secrets ----------------------------------------------------------------------------------
# The patterns every agent shares (agents/redaction-patterns.json; `agent python --install` puts a
# copy next to this module). Every string of the build is redacted before it is sent or spooled.

_RULES = None


def _redaction_rules():
    global _RULES
    if _RULES is None:
        data = _shipped_file(AGENT_NAME + "_redaction.json", os.path.join("agents", "redaction-patterns.json"))
        _RULES = (data["mask"], [re.compile(p["regex"], re.IGNORECASE if p.get("ignoreCase") else 0) for p in data["patterns"]])
    return _RULES


def _redact_text(text, literals=()):
    """Every match replaced by the part the pattern keeps (group 1) and the mask; then the listed values."""
    mask, patterns = _redaction_rules()

    def replace(m):
        kept = m.group(1) if m.re.groups >= 1 else None
        return (kept or "") + mask

    for pattern in patterns:
        text = pattern.sub(replace, text)
    for value in literals:
        if value:
            text = text.replace(value, mask)
    return text


def _redact_strings(value, literals=()):
    if isinstance(value, str):
        return _redact_text(value, literals)
    if isinstance(value, list):
        return [_redact_strings(v, literals) for v in value]
    if isinstance(value, dict):
        return {k: _redact_strings(v, literals) for k, v in value.items()}
    return value


def redacted_build(build, literals=()):
    """The build as it may leave the machine: every string of its events redacted."""
    out = dict(build)
    out["events"] = [dict(e, data=_redact_strings(e["data"], literals)) for e in build["events"]]
    return out


def _event(event_type, data, timestamp):
    return {"timestamp": int(timestamp), "type": {"majorVersion": 1, "minorVersion": 0, "eventType": event_type}, "data": data}


def _build_agent(words):
    """BuildAgent data: user, host names and addresses, each left out when its redaction word is given."""
    import getpass
    import socket

    left_out = _fields_left_out(words)
    data = {}
    if "username" not in left_out:
        try:
            data["username"] = getpass.getuser()
        except Exception:
            pass
    if "publicHostname" not in left_out:
        try:
            host = socket.gethostname()
            data["publicHostname"] = host
            data["localHostname"] = host
        except Exception:
            pass
    if "localIpAddresses" not in left_out:
        try:
            addresses = sorted(set(a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None) if not a[4][0].startswith("127.") and a[4][0] != "::1"))
            if addresses:
                data["localIpAddresses"] = addresses
        except Exception:
            pass
    return data


def _git(cwd, *args):
    import subprocess

    try:
        out = subprocess.run(("git",) + args, cwd=cwd, capture_output=True, text=True, timeout=2)
        return out.stdout.strip() if out.returncode == 0 else None
    except Exception:
        return None


_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)(.*)$", re.DOTALL)
_SCP = re.compile(r"^(.*)@([^@/:\[\]]+|\[[^\]]*\]):(.*)$", re.DOTALL)
_HOST_PORT = re.compile(r"^(\[[0-9A-Fa-f:.]*\]|[^:@\[\]]*)(:[0-9]*)?$")


def _without_user_info(remote):
    """A git remote without credentials, by the rule of src/agents/common-env.ts withoutUserInfo:
    URL-style remotes lose everything before the last '@' of the authority (taken by hand, since
    urllib.parse splits a password holding a raw '/', '?' or '#' early); scp-like remotes keep
    their user and lose a password."""
    url = _URL.match(remote)
    if url is None:
        scp = _SCP.match(remote)
        if scp is None or ":" not in scp.group(1):
            return remote
        return "%s@%s:%s" % (scp.group(1).split(":", 1)[0], scp.group(2), scp.group(3))
    scheme, rest = url.group(1), url.group(2)
    first_at = rest.find("@")
    if first_at < 0:
        return remote
    slash = rest.find("/")
    authority_end = len(rest) if slash < 0 else slash
    if first_at > authority_end and _HOST_PORT.match(rest[:authority_end]):
        return remote  # an '@' of the path
    segment_end = rest.find("/", first_at)
    last_at = rest.rfind("@", 0, len(rest) if segment_end < 0 else segment_end)
    return scheme + rest[last_at + 1 :]


def _context_events(context, cwd, at):
    """UserTag and UserNamedValue events: CI or LOCAL, the OS, git, the user's own (contract.ts names)."""
    c = _contract()
    events = []

    def tag(t):
        events.append(_event("UserTag", {"tag": t}, at))

    def value(k, v):
        events.append(_event("UserNamedValue", {"key": k, "value": v}, at))

    ci_keys = (c["values"]["ciProvider"], c["values"]["ciBuild"])
    for t in context["tags"][:2]:
        tag(t)
    for k, v in context["values"]:
        if k in ci_keys:
            value(k, v)
    # One call gives commit, branch and changes (porcelain v2 headers); a second the remote.
    status = _git(cwd, "status", "--porcelain=v2", "--branch")
    if status is not None:
        commit = branch = None
        dirty = False
        for line in status.splitlines():
            if line.startswith("# branch.oid "):
                commit = line[len("# branch.oid "):]
            elif line.startswith("# branch.head "):
                branch = line[len("# branch.head "):]
            elif line and not line.startswith("#"):
                dirty = True
        if commit and commit != "(initial)":
            remote = _git(cwd, "config", "--get", "remote.origin.url")
            if remote:
                value(c["values"]["gitRepository"], _without_user_info(remote))
            value(c["values"]["gitCommitId"], commit)
            if not branch or branch == "(detached)":
                branch = context["ciBranch"]
            if branch:
                value(c["values"]["gitBranch"], branch)
            value(c["values"]["gitStatus"], c["gitStatus"]["dirty"] if dirty else c["gitStatus"]["clean"])
            if dirty:
                tag(c["tags"]["dirty"])
    for t in context["tags"][2:]:
        tag(t)
    for k, v in context["values"]:
        if k not in ci_keys:
            value(k, v)
    return events


def _locale(env):
    raw = env.get("LC_ALL") or env.get("LC_MESSAGES") or env.get("LANG")
    if not raw or raw in ("C", "POSIX") or raw.startswith("C."):
        try:
            import locale

            raw = locale.getlocale()[0]
        except Exception:
            raw = None
    if not raw:
        return "und"
    code = raw.split(".")[0].replace("_", "-")
    parts = code.split("-")
    return parts[0] + ("-" + parts[1].upper() if len(parts) > 1 else "")


def _project_name(root):
    """The project's name from pyproject.toml ([project] or [tool.poetry]) or setup.cfg ([metadata])."""
    path = os.path.join(root, "pyproject.toml")
    if os.path.exists(path):
        try:
            import tomllib  # Python 3.11+

            with open(path, "rb") as f:
                data = tomllib.load(f)
            name = (data.get("project") or {}).get("name") or ((data.get("tool") or {}).get("poetry") or {}).get("name")
            if name:
                return str(name)
        except Exception:
            pass
    path = os.path.join(root, "setup.cfg")
    if os.path.exists(path):
        try:
            import configparser

            parser = configparser.ConfigParser()
            parser.read(path, encoding="utf-8")
            if parser.has_option("metadata", "name"):
                return parser.get("metadata", "name")
        except Exception:
            pass
    return None


_PEP503 = re.compile(r"[-_.]+")


def _distribution_header(dist):
    """Name and Version of a distribution from its metadata's headers, read directly: the email
    parser behind dist.metadata costs about 1.5 ms a distribution (measured), this a few tens of us."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    name = version = None
    for line in text.splitlines():
        if not line.strip():
            break  # the headers end at the first empty line
        if name is None and line.startswith("Name:"):
            name = line[5:].strip()
        elif version is None and line.startswith("Version:"):
            version = line[8:].strip()
    if name is None or version is None:
        # A layout the lines above do not read (an .egg-info file): the standard parser.
        meta = dist.metadata
        name, version = name or meta.get("Name"), version or meta.get("Version")
    return name, version


def _environment_dependencies(project, timestamp):
    """One ResolvedDependencies event: the distributions installed where this interpreter imports
    from (importlib.metadata, sys.path's order), each `name:version` with the name normalized as
    PEP 503 says. A name found twice is the first one, the one an import gets."""
    try:
        import importlib.metadata as metadata

        seen = {}
        for dist in metadata.distributions():
            try:
                name, version = _distribution_header(dist)
            except Exception:
                continue
            if not name:
                continue
            key = _PEP503.sub("-", name).lower()
            if key in seen:
                continue
            # The comparison reads the last ':' as the start of the version: neither part may hold one.
            version = version if version and ":" not in version else None
            seen[key] = key + ":" + version if version else key
        entries = sorted(seen.values())
        bound = _bound("buildDependencies")
        data = {"project": project, "configuration": "environment", "dependencies": entries[:bound]}
        if len(entries) > bound:
            data["omitted"] = len(entries) - bound
        return [_event("ResolvedDependencies", data, timestamp)]
    except Exception:
        return []


def _post(settings, lines):
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        settings["server"] + "/api/builds",
        data=("\n".join(lines) + "\n").encode("utf-8"),
        method="POST",
        headers={"content-type": "application/x-ndjson"},
    )
    if settings["access_key"]:
        request.add_header("authorization", "Bearer " + settings["access_key"])
    try:
        with urllib.request.urlopen(request, timeout=settings["timeout"]) as response:
            return json.loads(response.read().decode("utf-8"))["results"]
    except urllib.error.HTTPError as e:
        detail = ""
        try:
            detail = json.loads(e.read().decode("utf-8")).get("detail", "")
        except Exception:
            pass
        raise RuntimeError("the server answered %s%s" % (e.code, ": " + detail if detail else ""))
    except (urllib.error.URLError, OSError) as e:
        raise RuntimeError(str(getattr(e, "reason", e)))


def _private_dir(path):
    """A directory only its owner may enter (0700), as every agent makes its spool (src/agents/spool.ts)."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    try:
        if os.name == "posix" and os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o700)
    except OSError:
        pass


def _spool(settings, build):
    """Writes the build into the shared spool as <id>.ndjson, one ingest line, readable by its owner only."""
    _private_dir(settings["spool_dir"])
    path = os.path.join(settings["spool_dir"], build["buildId"] + ".ndjson")
    try:
        os.remove(path + ".tmp")  # a leftover keeps its mode; O_CREAT's mode applies to a new file only
    except OSError:
        pass
    fd = os.open(path + ".tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as f:
        f.write(json.dumps(build, separators=(",", ":")) + "\n")
    os.replace(path + ".tmp", path)


_STALE_CLAIM_S = 600
_FLUSH_AT_ONCE = 50


def _flush(settings):
    """Sends up to 50 spooled builds in one request. Each file is claimed first by renaming it to
    <name>.sending.<claimant>, so two senders never post it twice; claims left by a sender that
    died (older than 10 minutes) are taken back, and <id>.json files of older agents are taken in."""
    spool = settings["spool_dir"]
    try:
        names = os.listdir(spool)
    except OSError:
        return
    for n in names:
        # <id>.ndjson.sending.<claimant> (or an older agent's <id>.json.sending.<claimant>).
        claimed_id = _spooled_build(n.split(".sending.", 1)[0], (".ndjson", ".json")) if ".sending." in n else None
        older_id = _spooled_build(n, (".json",))
        try:
            if claimed_id and time.time() - os.stat(os.path.join(spool, n)).st_ctime > _STALE_CLAIM_S:
                os.replace(os.path.join(spool, n), os.path.join(spool, claimed_id + ".ndjson"))
            elif older_id:
                os.replace(os.path.join(spool, n), os.path.join(spool, older_id + ".ndjson"))
        except OSError:
            pass
    claimed = []
    for n in sorted(n for n in os.listdir(spool) if _spooled_build(n)):
        if len(claimed) == _FLUSH_AT_ONCE:
            break
        mine = os.path.join(spool, "%s.sending.py-%d" % (n, os.getpid()))
        try:
            os.replace(os.path.join(spool, n), mine)
        except OSError:
            continue
        claimed.append((n, mine))
    if not claimed:
        return
    try:
        lines = []
        for _, mine in claimed:
            with open(mine, encoding="utf-8") as f:
                lines.append(f.read().strip())
        results = _post(settings, lines)
    except Exception:
        for n, mine in claimed:
            os.replace(mine, os.path.join(spool, n))
        raise
    for (n, mine), result in zip(claimed, results):
        if result.get("status") == "rejected":
            _private_dir(os.path.join(spool, "rejected"))
            os.replace(mine, os.path.join(spool, "rejected", n))
        else:
            os.remove(mine)


def flush_spool_main():
    """Entry point of the background sender: sends the spool (this build and any left before)."""
    try:
        _flush(_settings(dict(os.environ)))
    except Exception:
        pass


def send_in_background(settings, build):
    """Spools the build and starts a detached sender, so pytest exits at once. Returns the line to print."""
    import subprocess

    _spool(settings, build)
    if not settings["server"]:
        return "Buildscope: build not sent (no server configured: set BUILDSCOPE_SERVER); kept in %s" % settings["spool_dir"]
    # A link is printed only for a server that is there: a moment's connection says so.
    if not _reachable(settings["server"], min(settings["timeout"], 1.0)):
        return "Buildscope: build not sent (%s does not answer); kept in %s, sent with the next build" % (settings["server"], settings["spool_dir"])
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ)
    env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    subprocess.Popen(
        [sys.executable, "-c", "import buildscope_pytest; buildscope_pytest.flush_spool_main()"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    return "Buildscope: %s/builds/%s" % (settings["server"], build["buildId"])


def send_build(settings, build):
    """Sends the spool, then the build; spools the build when that fails. Returns the line to print."""
    link = settings["server"] + "/builds/" + build["buildId"] if settings["server"] else None
    if not settings["server"]:
        _spool(settings, build)
        return "Buildscope: build not sent (no server configured: set BUILDSCOPE_SERVER); kept in %s" % settings["spool_dir"]
    try:
        _flush(settings)
        results = _post(settings, [json.dumps(build, separators=(",", ":"))])
    except Exception as e:
        _spool(settings, build)
        return "Buildscope: build not sent (%s); kept in %s, sent with the next build as %s" % (e, settings["spool_dir"], link)
    if results and results[0].get("status") == "rejected":
        return "Buildscope: the server rejected the build: %s" % results[0].get("error")
    return "Buildscope: " + link


class _Tee:
    """A file that also hands what is written to it to `sink`: pytest's terminal, kept as the console."""

    def __init__(self, target, sink):
        self._target = target
        self._sink = sink

    def write(self, text):
        try:
            self._sink(text)
        except Exception:  # never disturb the terminal
            pass
        return self._target.write(text)

    def __getattr__(self, name):
        return getattr(self._target, name)


class _Console:
    """What pytest's terminal reporter printed, up to the contract's consoleChars (then cut)."""

    # A ConsoleOutput event's text at most (the chunks of the console, in order).
    CHUNK = 64 * 1024

    def __init__(self):
        self.parts = []
        self.size = 0
        self.cut = False

    def add(self, text):
        if self.cut or not text:
            return
        room = _bound("consoleChars") - self.size
        if len(text) > room:
            text = text[: max(room, 0)]
            self.cut = True
        self.parts.append(text)
        self.size += len(text)

    def events(self, timestamp):
        text = "".join(self.parts)
        chunks = [text[i : i + self.CHUNK] for i in range(0, len(text), self.CHUNK)]
        out = []
        for k, chunk in enumerate(chunks):
            data = {"stream": "stdout", "text": chunk}
            if self.cut and k == len(chunks) - 1:
                data["truncated"] = True
            out.append(_event("ConsoleOutput", data, timestamp))
        return out


class _Recorder:
    def __init__(self, config):
        self.config = config
        self.env = dict(os.environ)
        self.started = _now_ms()
        self.tests = {}  # nodeid -> dict(start, stop, duration, outcome, phase, message)
        self.attempts = []  # each test's attempts, in order: dicts of the TestStarted / TestFinished they become
        self.running = {}  # nodeid -> its attempt running now
        self.order = []
        self.failures = []
        self.exitstatus = None
        self.console = _Console()

    # -- hooks ---------------------------------------------------------------------------------

    def pytest_sessionstart(self, session):
        # Before the terminal reporter prints its header (tryfirst, set below): from here on what
        # it writes is also kept as the build's console, unless consoleOutput is switched off.
        try:
            if not _settings(self.env)["console_output"]:
                return
            reporter = self.config.pluginmanager.getplugin("terminalreporter")
            writer = getattr(reporter, "_tw", None)
            if writer is not None and getattr(writer, "_file", None) is not None:
                writer._file = _Tee(writer._file, self.console.add)
        except Exception:
            pass

    def pytest_runtest_logstart(self, nodeid, location):
        # pytest 7's reports carry no start: the test starts when pytest says it does.
        try:
            self._attempt(nodeid)
        except Exception:
            pass

    def pytest_runtest_logfinish(self, nodeid, location):
        try:
            a = self.running.pop(nodeid, None)
            if a is not None:
                a["stop"] = _now_ms()
        except Exception:
            pass

    def _attempt(self, nodeid):
        a = self.running.get(nodeid)
        if a is None:
            number = 1 + sum(1 for b in self.attempts if b["nodeid"] == nodeid)
            a = {"nodeid": nodeid, "attempt": number, "start": _now_ms(), "stop": None, "outcome": "passed", "failure": None, "skipReason": None, "stdout": "", "stderr": ""}
            self.running[nodeid] = a
            self.attempts.append(a)
        return a

    def _record(self, report):
        a = self._attempt(report.nodeid)
        outcome = getattr(report, "outcome", None)
        if report.failed or outcome == "rerun":
            if a["outcome"] != "failed":
                a["outcome"] = "failed"
                crash = getattr(report.longrepr, "reprcrash", None)
                a["failure"] = failure_of(getattr(report, "longreprtext", None) or str(report.longrepr or ""), getattr(crash, "message", None))
        elif report.skipped and a["outcome"] == "passed":
            a["outcome"] = "skipped"
            xfail = getattr(report, "wasxfail", None)
            a["skipReason"] = ("xfail" + (": " + xfail if xfail else "")) if xfail is not None else skip_reason_of(report.longrepr)
        # The test's own output, phase by phase (pytest's captured sections).
        for title, content in getattr(report, "sections", ()) or ():
            for stream in ("stdout", "stderr"):
                if title == "Captured %s %s" % (stream, report.when):
                    room = _bound("testOutputChars") - len(a["stdout"]) - len(a["stderr"])
                    if room > 0:
                        a[stream] += content[:room]
        if outcome == "rerun":
            # pytest-rerunfailures runs the test again: the next reports are its next attempt.
            a["stop"] = _now_ms()
            del self.running[report.nodeid]

    def pytest_runtest_logreport(self, report):
        try:
            self._record(report)
        except Exception:
            pass
        try:
            t = self.tests.get(report.nodeid)
            if t is None:
                t = {"start": None, "stop": None, "duration": 0.0, "outcome": "success", "message": None}
                self.tests[report.nodeid] = t
                self.order.append(report.nodeid)
            start = getattr(report, "start", None)
            stop = getattr(report, "stop", None)
            if start is not None and t["start"] is None:
                t["start"] = int(start * 1000)
            if stop is not None:
                t["stop"] = int(stop * 1000)
            t["duration"] += float(getattr(report, "duration", 0.0) or 0.0)
            if report.failed:
                if report.when == "call":
                    t["outcome"] = "failed"
                    t["message"] = "Test %s failed" % report.nodeid
                elif t["outcome"] != "failed":
                    t["outcome"] = "failed"
                    t["message"] = "Test %s errored in %s" % (report.nodeid, report.when)
            elif report.skipped and report.when in ("setup", "call") and t["outcome"] == "success":
                t["outcome"] = "skipped"
        except Exception:
            pass

    def pytest_collectreport(self, report):
        try:
            if report.failed:
                self.failures.append({"classification": _NON_VERIFICATION, "message": "Collection of %s failed" % (report.nodeid or "the test suite")})
        except Exception:
            pass

    def pytest_internalerror(self, excrepr, excinfo):
        try:
            self.failures.append({"classification": _NON_VERIFICATION, "message": "pytest internal error: %s" % str(excrepr).strip().splitlines()[-1][:300]})
        except Exception:
            pass

    def pytest_sessionfinish(self, session, exitstatus):
        try:
            self.exitstatus = int(exitstatus)
        except Exception:
            self.exitstatus = 1

    def pytest_unconfigure(self, config):
        warning = None
        try:
            settings = _settings(self.env)
            warning = settings["warning"]
            build = redacted_build(self.build(), settings["redact_values"])
            # On a CI machine the job may be torn down as soon as pytest exits: send now (bounded
            # by the timeout). Elsewhere the build is spooled and sent by a background process.
            mode = self.env.get("BUILDSCOPE_SEND", "").lower()
            if mode == "background" or (mode != "sync" and _detect_ci(self.env) is None):
                line = send_in_background(settings, build)
            else:
                line = send_build(settings, build)
        except Exception as e:  # never fail the run
            line = "Buildscope: the build was not recorded: %s" % e
        try:
            sys.stderr.write((warning + "\n" if warning else "") + line + "\n")
            sys.stderr.flush()
        except Exception:
            pass

    # -- the build -----------------------------------------------------------------------------

    def build(self):
        import platform

        import pytest

        finished = _now_ms()
        start = self.started
        cwd = str(getattr(self.config.invocation_params, "dir", os.getcwd()))
        root = str(getattr(self.config, "rootpath", cwd))
        args = [str(a) for a in getattr(self.config.invocation_params, "args", ())]
        context = _settings(self.env)["context"]
        events = [_event("BuildStarted", {}, start), _event("BuildAgent", _build_agent(context["redact"]), start)]
        project = _project_name(root) or (_project_name(cwd) if cwd != root else None)
        if project:
            events.append(_event("ProjectStructure", {"rootProjectName": project}, start))
        events.append(_event("BuildRequestedTasks", {"requested": [" ".join(["pytest"] + args)], "excluded": []}, start))
        events.append(
            _event(
                "Environment",
                {
                    "locale": _locale(self.env),
                    "operatingSystem": _os_tag(),
                    "numberOfCpuCores": os.cpu_count() or 1,
                    "pythonVersion": platform.python_version(),
                },
                start,
            )
        )
        events.extend(_context_events(context, cwd, start))
        events.extend(_environment_dependencies(project or os.path.basename(root.rstrip(os.sep)) or root, start))
        failures = []
        for i, nodeid in enumerate(self.order, 1):
            t = self.tests[nodeid]
            t_start = t["start"] if t["start"] is not None else start
            t_stop = t["stop"] if t["stop"] is not None else t_start + int(t["duration"] * 1000)
            events.append(_event("TaskStarted", {"id": i, "path": nodeid}, t_start))
            events.append(_event("TaskFinished", {"id": i, "path": nodeid, "outcome": t["outcome"], "cacheable": False, "durationMs": int(round(t["duration"] * 1000))}, max(t_stop, t_start)))
            if t["outcome"] == "failed":
                failure = {"classification": _VERIFICATION, "message": t["message"]}
                cause = next((a["failure"] for a in reversed(self.attempts) if a["nodeid"] == nodeid and a["failure"]), None)
                if cause:
                    failure["cause"] = cause
                failures.append(failure)
        # Each test attempt: who it is, how it ended, why, and what it printed.
        settings = _settings(self.env)
        retried = set(a["nodeid"] for a in self.attempts if a["attempt"] > 1)
        for i, a in enumerate(self.attempts, 1):
            suite, name, params = identity_of(a["nodeid"])
            started = {"id": i, "suite": suite, "name": name}
            if params is not None:
                started["parameters"] = params
                started["displayName"] = "%s[%s]" % (name, params)
            if a["nodeid"] in retried:
                started["attempt"] = a["attempt"]
            stop = max(a["stop"] or finished, a["start"])
            events.append(_event("TestStarted", started, a["start"]))
            if settings["test_output"]:
                for stream in ("stdout", "stderr"):
                    if a[stream]:
                        events.append(_event("TestOutput", {"id": i, "stream": stream, "text": a[stream]}, stop))
            done = {"id": i, "outcome": a["outcome"]}
            if a["nodeid"] in retried:
                done["attempt"] = a["attempt"]
            if a["failure"]:
                done["failure"] = a["failure"]
            if a["skipReason"]:
                done["skipReason"] = a["skipReason"][: _bound("messageChars")]
            events.append(_event("TestFinished", done, stop))
        if settings["console_output"]:
            events.extend(self.console.events(max(finished, start)))
        events.append(_event("ServerSettings", {"testOutputCapturingEnabled": settings["test_output"], "buildOutputCapturingEnabled": settings["console_output"]}, start))
        failures.extend(self.failures)
        status = self.exitstatus if self.exitstatus is not None else 1
        # 0: all passed; 5: nothing collected (not a failure of the build).
        succeeded = status in (0, 5) and not failures
        if not succeeded and not failures:
            failures.append({"classification": _NON_VERIFICATION, "message": "pytest exited with %d" % status})
        events.append(_event("BuildFinished", {"outcome": "succeeded" if succeeded else "failed", "failures": failures, "exitCode": status}, max(finished, start)))
        return {"buildId": _new_build_id(), "toolType": "pybuild", "toolVersion": pytest.__version__, "agentVersion": _agent_version(), "events": events}


try:
    import pytest as _pytest_api

    # The recorder starts keeping the console before the terminal reporter's header.
    _Recorder.pytest_sessionstart = _pytest_api.hookimpl(tryfirst=True)(_Recorder.pytest_sessionstart)
except Exception:  # imported outside pytest (the background sender)
    pass


def pytest_configure(config):
    if os.environ.get("BUILDSCOPE_DISABLE") == "1" or getattr(config, "workerinput", None) is not None:
        # Off on request, and in pytest-xdist workers (the controller records the session).
        return
    try:
        config.pluginmanager.register(_Recorder(config), "buildscope-recorder")
    except Exception:
        pass
