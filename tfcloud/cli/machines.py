"""``tfcloud machines``: the machine catalog."""

# No `from __future__ import annotations` here: typer reads every command's annotations at start-up.
from typing import Annotated

import typer

from tfcloud.cli._app import app, dumps

__all__ = ["machines"]


@app.command()
def machines(
    json_output: Annotated[bool, typer.Option("--json", help="Print the catalog as JSON.")] = False,
    prices: Annotated[bool, typer.Option("--prices", help="Add each machine's hourly list price on Vertex AI "
                                                          "(us-central1; - where tfcloud's table has none).")] = False,
) -> None:
    """List the machine configs Vertex AI offers today and the training machine each maps to (Google's table, on
    the docs site's Machines page)."""
    from tfcloud.machines import offered_configs

    catalog = offered_configs()

    if prices:
        from tfcloud.prices import PRICE_DATE, PRICE_SOURCE, machine_price, price_table_line
    if json_output:
        typer.echo(dumps({
            name: {"machine_type": m.machine_type, "cpu_cores": m.cpu_cores, "memory_gb": m.memory,
                   "accelerator_type": m.accelerator_type.name, "accelerator_count": m.accelerator_count,
                   **({"tpu_topology": m.tpu_topology, "tpu_hosts": m.tpu_hosts} if m.tpu_topology else {}),
                   **({"price_per_hour_usd": machine_price(m)[0]} if prices else {})}
            for name, m in catalog.items()
        }, indent=2))
        return
    rows = [["NAME", "MACHINE TYPE", "VCPUS", "MEMORY (GB)", "ACCELERATOR", *(["PRICE/H"] if prices else [])]]
    for name, m in catalog.items():
        accel = "-" if m.accelerator_count == 0 else f"{m.accelerator_count} x {m.accelerator_type.name}"
        if m.tpu_hosts > 1:
            accel += f" x {m.tpu_hosts} hosts ({m.tpu_topology})"
        rows.append([name, m.machine_type, str(m.cpu_cores or "-"), f"{m.memory:g}" if m.memory else "-", accel,
                     *([price_table_line(m)] if prices else [])])
    # Plain aligned columns (no rich table: rich's console is most of this command's start-up otherwise).
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    for row in rows:
        typer.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    from tfcloud._docs import page

    typer.echo("\nOnly what Vertex AI offers today; the regions that serve each accelerator, TPU topologies and the "
               f"other rules: {page('machines')} and {page('vertex')}.")
    if prices:
        typer.echo(f"\nPRICE/H: one replica on demand in us-central1, from tfcloud's price table of {PRICE_DATE} "
                   f"({PRICE_SOURCE}); -: no price known (never guessed). Spot, Flex Start, reservations and "
                   "persistent resources are billed otherwise: docs/vertex.md, \"Price in the plan\".")
