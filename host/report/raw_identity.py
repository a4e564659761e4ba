"""Which run wrote a raw folder: `memtopo run --raw-dir` leaves run.toml there (its topology's
created_utc, host and device_spec), and the report draws the series only beside the topology
of that run."""

import os
import tomllib

FILE = "run.toml"
FIELDS = ("created_utc", "host", "device_spec")


def _text(value):
    """A date-time as the topology's TOML reads (a datetime) and as run.toml or JSON hold it."""
    text = value.isoformat() if hasattr(value, "isoformat") else str(value)
    return text.replace("+00:00", "Z")


def named(raw_dir):
    """Whether the folder says which run wrote it (memtopo before run.toml did not)."""
    return os.path.isfile(os.path.join(raw_dir, FILE))


def mismatch(raw_dir, topo):
    """Why the folder's series are not of the topology's run, or "" where they are or the
    folder does not say."""
    path = os.path.join(raw_dir, FILE)
    if not os.path.isfile(path):
        return ""
    try:
        with open(path, "rb") as f:
            run = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        return f"{path}: cannot be read ({e}); name the --raw-dir the run of {topo.path} wrote"
    differ = [f"{k} {_text(run.get(k, '-'))} against {_text(topo.meta.get(k, '-'))}"
              for k in FIELDS if _text(run.get(k, "")) != _text(topo.meta.get(k, ""))]
    if not differ:
        return ""
    return (f"--raw-dir {raw_dir}: its series are of another run than {topo.path} ("
            + "; ".join(differ) + "); name the --raw-dir of the run that wrote the topology")
