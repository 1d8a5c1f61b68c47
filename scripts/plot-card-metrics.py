#!/usr/bin/env python3
"""Draws the per-card metrics sampled by test/e2e/cards.e2e.test.ts (E2E_CARD_METRICS_OUT=FILE)
the way the chart's Grafana dashboard shows them: free cards per pool over time, and a heat map of
the memory promised per card. Needs matplotlib (PyPI).

    python3 scripts/plot-card-metrics.py card-metrics.json docs/images/card-metrics.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(source: str, target: str) -> None:
    with open(source, encoding="utf-8") as f:
        data = json.load(f)
    samples = [s for s in data["samples"] if s["cards"]]
    t0 = samples[0]["t"]
    times = [s["t"] - t0 for s in samples]
    pools = sorted({p for s in samples for p in s["pools"]})
    cards = sorted(
        {c for s in samples for c in s["cards"]},
        key=lambda c: (c.split("/")[0], int(c.rsplit("-", 1)[1])),
    )

    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(10, 7), sharex=True, gridspec_kw={"height_ratios": [1, 1.3]}
    )
    for pool in pools:
        free = [s["pools"].get(pool, {}).get("gpustack_pool_cards_free") for s in samples]
        total = [s["pools"].get(pool, {}).get("gpustack_pool_cards") for s in samples]
        line = top.step(times, free, where="post", label=f"{pool} free")[0]
        top.step(times, total, where="post", linestyle=":", color=line.get_color(), label=f"{pool} cards")
    top.set_ylabel("cards")
    top.set_title("gpustack_pool_cards_free / gpustack_pool_cards per pool")
    top.legend(fontsize=7, loc="lower left")
    top.set_ylim(bottom=-0.2)

    grid = []
    for card in cards:
        row = []
        for s in samples:
            m = s["cards"].get(card, {})
            cap = m.get("gpustack_card_memory_bytes") or 1
            row.append(m.get("gpustack_card_memory_promised_bytes", 0) / cap)
        grid.append(row)
    image = bottom.imshow(
        grid,
        aspect="auto",
        interpolation="nearest",
        cmap="YlOrRd",
        vmin=0,
        vmax=1,
        extent=(times[0], times[-1], len(cards) - 0.5, -0.5),
    )
    bottom.set_yticks(range(len(cards)))
    bottom.set_yticklabels(cards, fontsize=8)
    bottom.set_xlabel("seconds into the e2e scenario (real kube-scheduler allocating claims)")
    bottom.set_title("gpustack_card_memory_promised_bytes / gpustack_card_memory_bytes per card")
    fig.colorbar(image, ax=bottom, label="share of the card's memory promised", fraction=0.03)
    fig.tight_layout()
    fig.savefig(target, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
