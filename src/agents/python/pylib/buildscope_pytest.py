"""Buildscope's pytest plugin: records a pytest session as a `pybuild` build.

Enable it with ``pytest -p buildscope_pytest`` (this directory on PYTHONPATH), or install it into a
virtual environment with ``npx buildscope agent python --install`` (then pytest loads it by
itself). Settings come from the environment (BUILDSCOPE_SERVER, BUILDSCOPE_ACCESS_KEY,
BUILDSCOPE_SPOOL_DIR, BUILDSCOPE_TIMEOUT_MS, BUILDSCOPE_REDACT, BUILDSCOPE_TAGS,
BUILDSCOPE_VALUES) or the agent's file (agent.properties in BUILDSCOPE_AGENT_DIR or ~/.buildscope),
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
_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
_VERIFICATION = "verification"
_NON_VERIFICATION = "non-verification"


def _now_ms():
    return int(time.time() * 1000)


def _new_build_id():
    import secrets

    out = ""
    while len(out) < 13:
        b = secrets.randbits(8)
        if b < 252:
            out += _ALPHABET[b % 36]
    return out


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


def _settings(env):
    """The settings every Buildscope agent reads, in the same order (src/agents/settings.ts)."""
    home = env.get("HOME") or os.path.expanduser("~")
    agent_dir = (env.get("BUILDSCOPE_AGENT_DIR") or "").strip() or os.path.join(home, ".buildscope")
    config_file = os.path.join(agent_dir, "agent.properties")
    from_file = _properties(config_file)
    server = (env.get("BUILDSCOPE_SERVER") or "").strip() or from_file.get("server")
    try:
        timeout = float(env.get("BUILDSCOPE_TIMEOUT_MS", "5000")) / 1000.0
    except ValueError:
        timeout = 5.0
    access_key = (env.get("BUILDSCOPE_ACCESS_KEY") or "").strip() or from_file.get("accessKey") or None
    listed = (env.get("BUILDSCOPE_REDACT_VALUES") or "").strip() or from_file.get("redactValues") or ""
    redact_values = [v.strip() for v in listed.split(",") if v.strip()]
    if access_key:
        redact_values.append(access_key)
    return {
        "server": server.rstrip("/") if server else None,
        "access_key": access_key,
        "spool_dir": (env.get("BUILDSCOPE_SPOOL_DIR") or "").strip() or from_file.get("spoolDir") or os.path.join(agent_dir, "spool"),
        "timeout": timeout if timeout > 0 else 5.0,
        "redact_values": redact_values,
        "warning": _config_file_warning(config_file),
    }


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
        here = os.path.dirname(os.path.abspath(__file__))
        for path in (os.path.join(here, AGENT_NAME + "_redaction.json"), os.path.join(here, "..", "..", "..", "..", "agents", "redaction-patterns.json")):
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    data = json.load(f)
                break
        else:
            # Without its patterns the plugin sends nothing rather than something unredacted.
            raise RuntimeError("the redaction patterns (%s_redaction.json) are missing" % AGENT_NAME)
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


def _redaction(env):
    words = set(w for w in env.get("BUILDSCOPE_REDACT", "").lower().replace(",", " ").split() if w)
    every = "all" in words
    return {k: every or k in words for k in ("user", "hostname", "ip")}


def _build_agent(env):
    import getpass
    import socket

    redact = _redaction(env)
    data = {}
    if not redact["user"]:
        try:
            data["username"] = getpass.getuser()
        except Exception:
            pass
    host = None
    if not redact["hostname"]:
        try:
            host = socket.gethostname()
            data["publicHostname"] = host
            data["localHostname"] = host
        except Exception:
            pass
    if not redact["ip"]:
        try:
            addresses = sorted(set(a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None) if not a[4][0].startswith("127.") and a[4][0] != "::1"))
            if addresses:
                data["localIpAddresses"] = addresses
        except Exception:
            pass
    return data


def _ci(env):
    if env.get("GITHUB_ACTIONS") == "true":
        url = None
        if env.get("GITHUB_SERVER_URL") and env.get("GITHUB_REPOSITORY") and env.get("GITHUB_RUN_ID"):
            url = "%s/%s/actions/runs/%s" % (env["GITHUB_SERVER_URL"], env["GITHUB_REPOSITORY"], env["GITHUB_RUN_ID"])
        return "GitHub Actions", url
    if env.get("GITLAB_CI") is not None:
        return "GitLab CI", env.get("CI_JOB_URL")
    if env.get("JENKINS_URL") is not None and env.get("BUILD_URL") is not None:
        return "Jenkins", env.get("BUILD_URL")
    if env.get("CIRCLECI") is not None:
        return "CircleCI", env.get("CIRCLE_BUILD_URL")
    if env.get("BUILDKITE") is not None:
        return "Buildkite", env.get("BUILDKITE_BUILD_URL")
    if env.get("TF_BUILD") is not None:
        return "Azure Pipelines", None
    if env.get("TRAVIS") is not None:
        return "Travis CI", env.get("TRAVIS_BUILD_WEB_URL")
    if env.get("CI") not in (None, "", "false"):
        return "", None
    return None


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


def _os_tag():
    import platform

    return {"linux": "Linux", "darwin": "Mac OS X", "win32": "Windows"}.get(sys.platform, platform.system() or sys.platform)


def _context_events(env, cwd, at):
    events = []

    def tag(t):
        events.append(_event("UserTag", {"tag": t}, at))

    def value(k, v):
        events.append(_event("UserNamedValue", {"key": k, "value": v}, at))

    ci = _ci(env)
    tag("CI" if ci is not None else "LOCAL")
    if ci is not None and ci[0]:
        value("CI provider", ci[0])
    if ci is not None and ci[1]:
        value("CI build", ci[1])
    tag(_os_tag())
    # One call gives commit, branch and changes (porcelain v2 headers); a second the remote.
    status = _git(cwd, "status", "--porcelain=v2", "--branch")
    if status is not None:
        commit = branch = None
        changes = []
        for line in status.splitlines():
            if line.startswith("# branch.oid "):
                commit = line[len("# branch.oid "):]
            elif line.startswith("# branch.head "):
                branch = line[len("# branch.head "):]
            elif not line.startswith("#"):
                changes.append(line)
        if commit and commit != "(initial)":
            remote = _git(cwd, "config", "--get", "remote.origin.url")
            if remote:
                value("Git repository", _without_user_info(remote))
            value("Git commit id", commit)
            if not branch or branch == "(detached)":
                branch = env.get("GITHUB_HEAD_REF") or env.get("GITHUB_REF_NAME") or env.get("CI_COMMIT_REF_NAME")
            if branch:
                value("Git branch", branch)
            if changes:
                tag("Dirty")
                value("Git status", "\n".join(changes)[:2000])
    for t in env.get("BUILDSCOPE_TAGS", "").split(","):
        if t.strip():
            tag(t.strip())
    for pair in env.get("BUILDSCOPE_VALUES", "").split(";"):
        k, eq, v = pair.partition("=")
        if eq and k.strip():
            value(k.strip(), v.strip())
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


_SPOOLED = re.compile(r"^[0-9a-z]{13}\.ndjson$")
_CLAIMED = re.compile(r"^([0-9a-z]{13}\.(?:nd)?json)\.sending\.")
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
        claim = _CLAIMED.match(n)
        try:
            if claim and time.time() - os.stat(os.path.join(spool, n)).st_ctime > _STALE_CLAIM_S:
                os.replace(os.path.join(spool, n), os.path.join(spool, claim.group(1)[:13] + ".ndjson"))
            elif re.match(r"^[0-9a-z]{13}\.json$", n):
                os.replace(os.path.join(spool, n), os.path.join(spool, n[:13] + ".ndjson"))
        except OSError:
            pass
    claimed = []
    for n in sorted(n for n in os.listdir(spool) if _SPOOLED.match(n)):
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


class _Recorder:
    def __init__(self, config):
        self.config = config
        self.env = dict(os.environ)
        self.started = _now_ms()
        self.tests = {}  # nodeid -> dict(start, stop, duration, outcome, phase, message)
        self.order = []
        self.failures = []
        self.exitstatus = None

    # -- hooks ---------------------------------------------------------------------------------

    def pytest_runtest_logreport(self, report):
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
            if mode == "background" or (mode != "sync" and _ci(self.env) is None):
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
        events = [_event("BuildStarted", {}, start), _event("BuildAgent", _build_agent(self.env), start)]
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
        events.extend(_context_events(self.env, cwd, start))
        failures = []
        for i, nodeid in enumerate(self.order, 1):
            t = self.tests[nodeid]
            t_start = t["start"] if t["start"] is not None else start
            t_stop = t["stop"] if t["stop"] is not None else t_start + int(t["duration"] * 1000)
            events.append(_event("TaskStarted", {"id": i, "path": nodeid}, t_start))
            events.append(_event("TaskFinished", {"id": i, "path": nodeid, "outcome": t["outcome"], "cacheable": False, "durationMs": int(round(t["duration"] * 1000))}, max(t_stop, t_start)))
            if t["outcome"] == "failed":
                failures.append({"classification": _VERIFICATION, "message": t["message"]})
        failures.extend(self.failures)
        status = self.exitstatus if self.exitstatus is not None else 1
        # 0: all passed; 5: nothing collected (not a failure of the build).
        succeeded = status in (0, 5) and not failures
        if not succeeded and not failures:
            failures.append({"classification": _NON_VERIFICATION, "message": "pytest exited with %d" % status})
        events.append(_event("BuildFinished", {"outcome": "succeeded" if succeeded else "failed", "failures": failures, "exitCode": status}, max(finished, start)))
        return {"buildId": _new_build_id(), "toolType": "pybuild", "toolVersion": pytest.__version__, "agentVersion": _agent_version(), "events": events}


def pytest_configure(config):
    if os.environ.get("BUILDSCOPE_DISABLE") == "1" or getattr(config, "workerinput", None) is not None:
        # Off on request, and in pytest-xdist workers (the controller records the session).
        return
    try:
        config.pluginmanager.register(_Recorder(config), "buildscope-recorder")
    except Exception:
        pass
