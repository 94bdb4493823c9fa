"""The benchmark run (`flashmark run`) and what judges a device: the pipeline, the fio jobs of
its tests and their output (jobs, results), the grades (grading/), the card passport, the run's
model and document, their renderers (render/), and `flashmark probe` (probing).

    with open_benchmark(BenchmarkRequest("/media/card")) as benchmark:   # planned
        run = benchmark.run(progress)                                     # measured, judged

benchmark.py holds the pipeline; `flashmark history` and `show` do not import it.
"""
