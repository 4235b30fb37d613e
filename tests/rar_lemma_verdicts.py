"""The expected verdicts of SJF-BCO's Lemma 2-4 claims, the same on every committed rar sample
(fig4 and Fig. 6's groups): shared by the rar verdict tests."""

LEMMA_VERDICTS = {
    "lemma2-paper": "reproduced",
    "lemma2-tight-paper": "not reproduced",
    "lemma3-paper": "vacuous",
    "lemma3-plan-paper": "vacuous",
    "lemma4-paper": "not reproduced",
    "lemma4-wmax-paper": "reproduced",
    "lemma2-contention": "reproduced",
    "lemma2-tight-contention": "not reproduced",
    "lemma3-contention": "vacuous",
    "lemma3-plan-contention": "vacuous",
    "lemma4-contention": "vacuous",
    "lemma4-wmax-contention": "vacuous",
}
