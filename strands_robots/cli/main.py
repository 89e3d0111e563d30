"""Entry point of the ``strands-labels`` command.

Each module named in ``COMMAND_MODULES`` exposes ``register(app)`` and adds its
commands; this file only assembles them and handles errors uniformly: a
``LabelsError`` (bad input, a refused sidecar) prints its message and exits 2.
"""

import atexit
import gc
import importlib
import os
import sys
from typing import Annotated

import typer

from strands_robots.cli.common import LabelsGroup, err_console, plain_errors, styled
from strands_robots.errors import LabelsError, bounded_message

COMMAND_MODULES = ["info", "labels", "outcomes", "ssc", "judge", "segments", "web"]

#: The other PyPI project that ships a ``strands_robots`` package of the same name.
CONFLICTING_DISTRIBUTION = "strands-robots"

app = typer.Typer(
    name="strands-labels",
    help="Label LeRobot datasets: verdicts, judge labels, reviews, outcomes, segments.",
    cls=LabelsGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # plain click help: no rich panels that cut option names and choices mid-word
    rich_markup_mode=None,
    context_settings={"max_content_width": 100},
)


def _version(value: bool) -> None:
    if value:
        from strands_robots import __version__

        typer.echo(f"strands-labels {__version__}")
        raise typer.Exit()


def conflicting_distribution_installed() -> str | None:
    """Version of the other ``strands-robots`` distribution if it is installed, else None."""
    import importlib.metadata  # ~40 ms: paid by the run, not by importing the CLI

    try:
        return importlib.metadata.version(CONFLICTING_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def _warn_conflict() -> None:
    version = conflicting_distribution_installed()
    if version is not None:
        err_console.print(
            styled(
                ("warning:", "yellow"),
                f" the distribution '{CONFLICTING_DISTRIBUTION}' {version} is installed in this "
                "environment. It ships a different 'strands_robots' package; the two cannot share one environment. "
                "Uninstall one of them (pip uninstall strands-robots) or use separate virtual environments.",
            )
        )


@app.callback()
def _options(
    revision: str | None = typer.Option(
        None, "--revision", help="Hub revision (branch, tag, commit) of a repo-id ROOT; default main."
    ),
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Label LeRobot datasets: verdicts, judge labels, reviews, outcomes, segments."""
    from strands_robots.cli.common import hub_revision

    hub_revision["value"] = revision


for _name in COMMAND_MODULES:
    importlib.import_module(f"strands_robots.cli.{_name}").register(app)
plain_errors(app)


def run() -> None:
    """Console-script entry point."""
    # Start-up work this process never uses (docs/performance.md, "Guard rails"); a value the
    # user set (for OpenBLAS, in any of its three variables) is kept. pydantic validates only this package's label models: no search of every
    # installed distribution for plugins (~40 ms of `outcome set`). numpy's work here is
    # element-wise or on small matrices: OpenBLAS starts no thread per core at numpy's import
    # (~80 ms of CPU of each command that reads a dataset).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    if not {"OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS"} & os.environ.keys():
        os.environ["OPENBLAS_NUM_THREADS"] = "1"
    # The interpreter's last garbage collections at exit traverse every object the imports made
    # (numpy, pyarrow, pydantic's schemas): ~30-50 ms of a command. The objects alive at exit
    # are frozen out of them (reference counting and atexit still finalize what they hold).
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    _warn_conflict()
    try:
        app()
    except LabelsError as exc:
        err_console.print(styled(("error:", "red"), f" {bounded_message(exc)}"))
        sys.exit(2)


if __name__ == "__main__":
    run()
