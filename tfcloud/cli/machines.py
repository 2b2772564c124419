"""``tfcloud machines``: the machine catalog."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import Annotated

import typer

from tfcloud.cli._app import app, dumps

__all__ = ["machines"]


@app.command()
def machines(
    json_output: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
    prices: Annotated[bool, typer.Option("--prices", help="Add each machine's hourly list prices in us-central1: "
                                                          "Vertex AI training on demand, and Compute Engine on "
                                                          "demand and Spot (- where tfcloud's table has none).")
                      ] = False,
) -> None:
    """List the machine configs Vertex AI offers today and the training machine each maps to (Google's table, on
    the docs site's Machines page)."""
    from tfcloud.google.catalog.machines import not_yet_runnable, offered_configs

    catalog = offered_configs()
    blocked = {name: reason for name, m in catalog.items() if (reason := not_yet_runnable(m)) is not None}

    if prices:
        from tfcloud.google.catalog.price_table import PRICE_SOURCES
        from tfcloud.google.catalog.prices import PRICE_DATE, PRICE_SOURCE, machine_price, price_table_line

        kinds = (("price_per_hour_usd", "on-demand", "TRAINING/H"),
                 ("compute_engine_per_hour_usd", "compute-engine", "CE/H"),
                 ("compute_engine_spot_per_hour_usd", "compute-engine-spot", "CE SPOT/H"))
    if json_output:
        typer.echo(dumps({
            name: {"machine_type": m.machine_type, "cpu_cores": m.cpu_cores, "memory_gb": m.memory,
                   "accelerator_type": m.accelerator_type.name, "accelerator_count": m.accelerator_count,
                   **({"tpu_topology": m.tpu_topology, "tpu_hosts": m.tpu_hosts} if m.tpu_topology else {}),
                   **({key: machine_price(m, capacity=kind)[0] for key, kind, _ in kinds} if prices else {}),
                   **({"not_yet_runnable": blocked[name]} if name in blocked else {})}
            for name, m in catalog.items()
        }, indent=2))
        return
    titles = [title for _, _, title in kinds] if prices else []
    rows = [["NAME", "MACHINE TYPE", "VCPUS", "MEMORY (GB)", "ACCELERATOR", *titles]]
    for name, m in catalog.items():
        accel = "-" if m.accelerator_count == 0 else f"{m.accelerator_count} x {m.accelerator_type.name}"
        if m.tpu_hosts > 1:
            accel += f" x {m.tpu_hosts} hosts ({m.tpu_topology})"
        rows.append([name + (" *" if name in blocked else ""), m.machine_type, str(m.cpu_cores or "-"),
                     f"{m.memory:g}" if m.memory else "-", accel,
                     *([price_table_line(m, capacity=kind) for _, kind, _ in kinds] if prices else [])])
    # Plain aligned columns (no rich table: rich's console is most of this command's start-up otherwise).
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    from tfcloud.config.docsite import page

    for name, reason in blocked.items():
        typer.echo(f"\n* {name}: {reason}.")
    typer.echo("\nOnly what Vertex AI offers today; the regions that serve each accelerator, TPU topologies and the "
               f"other rules: {page('machines')} and {page('vertex')}.")
    if prices:
        typer.echo(f"\nOne replica per hour in us-central1, from tfcloud's price table of {PRICE_DATE}; -: no price "
                   "known (never guessed). TRAINING/H: Vertex AI training on demand "
                   f"({PRICE_SOURCE}). CE/H and CE SPOT/H: Compute Engine on demand (what a reservation bills) and "
                   f"Spot ({PRICE_SOURCES['compute-engine']}). Spot, Flex Start, reservations and persistent "
                   f"resources are billed as {page('vertex', 'price-in-the-plan')} says.")
