"""guardbench's command line: one file per verb, each imported only when used.

Start-up stays cheap: `guardbench --help` imports click and this file only.
"""
from __future__ import annotations

import importlib
import os
import shlex
import sys
from typing import Any

import click

from guardbench.errors import GuardbenchError

# verb -> (module, attribute, one-line purpose). The purpose is listed by --help
# without importing the verb's module.
VERBS: dict[str, tuple[str, str, str]] = {
    "run": ("guardbench.cli.run", "run", "Run cases through arms and score what reached the wire."),
    "table": ("guardbench.cli.table", "table", "Re-print a run's tables from its records alone."),
    "policy": ("guardbench.cli.policy", "policy", "Check a policy file and print what each "
               "operation permits."),
    "ledger": ("guardbench.cli.ledger", "ledger", "Verify a hash-chained ledger and name the "
               "first broken entry."),
    "sandbox": ("guardbench.cli.sandbox", "sandbox", "Serve the PayPal stand-in over HTTP on "
                "127.0.0.1, recording."),
    "specs": ("guardbench.cli.specs", "specs", "Fetch and verify PayPal's pinned "
              "OpenAPI documents."),
    "conformance": ("guardbench.cli.conformance", "conformance",
                    "Validate composed and recorded requests against PayPal's OpenAPI documents."),
    "mutate": ("guardbench.cli.mutate", "mutate", "Remove one safeguard at a time and show which "
               "evidence notices."),
    "prereg": ("guardbench.cli.prereg", "prereg", "Freeze a preregistered plan and check its "
               "hypotheses on a run."),
    "report": ("guardbench.cli.report", "report", "Write a Markdown and HTML report with "
               "figures for runs."),
    "compare": ("guardbench.cli.compare", "compare",
                "Pair two runs by case, variant and repeat and test the difference."),
    "export": ("guardbench.cli.export", "export", "Export a run's records as CSV or Parquet."),
    "defences": ("guardbench.cli.defences", "defences", "List the defences installed (built in "
                 "and plug-ins)."),
    "bypass": ("guardbench.cli.bypass", "bypass", "Apply the static bypass vectors to every "
               "defence's decision."),
    "adapt": ("guardbench.cli.adapt", "adapt", "Run the adaptive attacker against each defence."),
    "check": ("guardbench.cli.check", "check", "Check a run against requirements (a CI gate): "
              "exit 0 held, 1 failed."),
    "mcp": ("guardbench.cli.mcp", "mcp", "Serve guardbench's defences and broker as MCP servers."),
}


def _available() -> dict[str, tuple[str, str, str]]:
    from importlib.util import find_spec
    return {k: v for k, v in VERBS.items() if find_spec(v[0]) is not None}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_available())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        spec = _available().get(name)
        if spec is None:
            return None
        mod = importlib.import_module(spec[0])
        return getattr(mod, spec[1])

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, VERBS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        """Every user-caused failure is one line on stderr: ``error: where: what``, exit status 2
        (bad input, a bad option, a file that cannot be read or written, a full disk); Ctrl-C is
        130."""
        try:
            return super().invoke(ctx)
        except GuardbenchError as exc:
            click.echo(f"error: {exc}", err=True)
            ctx.exit(2)
        except click.UsageError as exc:
            param = getattr(exc, "param", None)
            where = max(param.opts, key=len) if param is not None and getattr(param,
                                                                              "opts", None) else \
                (exc.ctx.command_path if exc.ctx is not None else "guardbench")
            what = exc.message if param is not None and getattr(exc, "message",
                                                                None) else exc.format_message()
            click.echo(f"error: {where}: {what}", err=True)
            ctx.exit(2)
        except BrokenPipeError:          # e.g. `guardbench table RUN | head`: the reader left
            sys.stdout = open(os.devnull, "w")
            ctx.exit(1)
        # a folder that cannot be written, a full disk, a file that vanished
        except OSError as exc:
            where = exc.filename or "guardbench"
            click.echo(f"error: {where}: {exc.strerror or exc}", err=True)
            ctx.exit(2)
        # `run` says how to resume once it has a folder; before that, this
        except KeyboardInterrupt:
            argv = sys.argv[1:] if sys.argv and sys.argv[0].endswith(("guardbench",
                                                                      "main.py", "-m")) else []
            again = (f"; nothing was recorded, start again with:\n  guardbench {shlex.join(argv)}"
                     if argv else "")
            click.echo(f"\ninterrupted{again}", err=True)
            ctx.exit(130)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="guardbench")
def cli() -> None:
    """guardbench: does a defence stop an AI agent from being talked into moving money?

    Everything is scored on what the recording transport was asked to send.
    """


def main(argv: list[str] | None = None) -> None:
    try:
        cli.main(args=argv, prog_name="guardbench", standalone_mode=True)
    except GuardbenchError as exc:  # pragma: no cover - raised outside invoke
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except SystemExit as exc:
        if exc.code in (130, 143):
            # Ctrl-C or SIGTERM, once the command has said so (and closed its run folder): leave
            # now. The interpreter's teardown after a KeyboardInterrupt sometimes ended the process
            # by SIGINT instead of status 130.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130 if exc.code == 130 else 143)
        run = sys.modules.get("guardbench.cli.run")
        if exc.code in (0, None) and getattr(run, "DONE", None) == ["scripted"]:
            # a finished scripted run has written, flushed and closed everything: skip the
            # interpreter's teardown of its objects (tens of milliseconds after the last line)
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(0)
        raise


if __name__ == "__main__":
    main()
