"""Preset ntuple_2048_master: an hour of TD(λ) with restarts and temporal coherence on two cores.

Eight 6-tuples (ziap/2048-tdl's 8x6 network; 2.0 replaced the four 6-tuples of Szubert & Jaśkowski / Yeh et
al., which scored 162,259-190,275 greedy in five hours against 210,401 for these in one) learned at the end
of each game backwards towards λ-returns with λ = 0.5, restarts from the middle of long games and temporal
coherence with alpha 1.0 from the first game (ziap/2048-tdl's recipe), on two threads with lock-free shared
weights, for at most an hour of wall-clock time (``seconds = 3600``: give ``agentos train`` a large number of
games).  Plays greedily (1-ply) with tile-downgrading from 32768; set ``search_depth = 2`` (3-ply) for
expectimax.  The figures of this recipe are in docs/benchmarks.md ("Mastering 2048 in an hour").  Plain
data: reading it imports nothing heavy (see agentos.experiments).
"""

#: ziap/2048-tdl's ``nw8x6``, its cells as it numbers them (a tuple and its turned copies read the same boards:
#: every one of the 8 symmetries is summed).
EIGHT_BY_SIX = ("0 1 2 4 5 6; 1 2 5 6 9 13; 0 1 2 3 4 5; 0 1 5 6 7 10; 0 1 2 5 9 10; 0 1 5 9 13 14; "
                "0 1 5 8 9 13; 0 1 2 4 6 10")

PRESET = {
    "summary": "ntuple 8x6 + td: TD(0.5) with restarts and TC (alpha 1.0), 2 threads, 1 hour (2048)",
    "components": {
        "policy": [
            "ntuple",
            {"tuples": EIGHT_BY_SIX, "downgrade_tile": 32768,
             "search_depth": 0, "cache_bits": 22},
        ],
        "trainer": [
            "td",
            {"alpha": 1.0, "td_lambda": 0.5, "restarts": True, "coherent": True, "threads": 2, "seconds": 3600},
        ],
    },
    "environment": "2048",  # a folder holding only this preset trains on 2048; install --default switches to it
    "environments": {"2048": {}},
}
