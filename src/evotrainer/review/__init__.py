"""Human review of policies' minutes: ``evotrainer review RUN_DIR`` serves a local page where
people compare two policies' minutes blind; ratings go to ``RUN_DIR/ratings.sqlite``; a
Bradley-Terry fit turns them into per-policy scores and into the meta-objective's ``human``
objective, which a running or resumed run reads at every outer step.

store.py (ratings, SQLite) -> bradley_terry.py (fits) -> human_model.py (the human objective)
-> feedback.py (what the run reads); pairs.py (what to show) -> app.py (the page, Flask) ->
server.py (binding, token); agreement.py (people vs the automatic metric).
"""
