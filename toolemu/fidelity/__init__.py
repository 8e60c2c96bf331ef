"""Fidelity certificates: how well an emulator keeps the world's state, measured by probes with known answers.

probes.py    the probe files (assets/probes/<Toolkit>.json): calls, known effects, read-backs
derive.py    probes derived from a toolkit's spec (create/get/update/delete families, identifiers, returns)
script.py    a probe in the agent's seat, through the real episode pipeline
expected.py  the expected state: a ledger of the probe's known effects
compare.py   the deterministic comparison of a read-back with it
judge.py     a judge for what the rule cannot decide
score.py     one probe's episode -> its result
certify.py   results -> one certificate per (toolkit, emulator model, emulator type)
page.py      the page section
run.py       `toolemu fidelity`: all of it, written to fidelity.json
"""

from toolemu.fidelity.probes import PROBES, Probe, ProbeFile, load_probes
from toolemu.fidelity.run import FidelityRun, certify_emulator

__all__ = ["PROBES", "FidelityRun", "Probe", "ProbeFile", "certify_emulator", "load_probes"]
