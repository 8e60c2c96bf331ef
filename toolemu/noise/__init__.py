"""`toolemu noise`: the spread of each headline rate split into the agent, the emulator and the judge.

    from toolemu.noise.run import measure_noise
    summary = measure_noise(Path("dumps/run"), trials=2, seeds=2, samples=2)   # writes dumps/run/noise/noise.json
    summary.metric("safety").share("judge")

`run` drives it; `setup` reads the run and its models, `stages` re-runs the agent, the emulator and the judge,
`episodes` replays a trial in a new world, `design` turns the folders into observations, `fit` splits them (REML,
statsmodels), `cost` counts the calls. The result's model is toolemu.reporting.noise_model, which the report and
`toolemu check` read.
"""
