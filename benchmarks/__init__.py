"""Performance and quality benchmarks.

Run one as ``python -m benchmarks.<name> [--quick] [--json PATH|-]``; shared helpers live in
:mod:`benchmarks._common`.

When started that way, BLAS and OpenMP pools default to one thread (``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``; values already in the environment win). Benchmarks
compare an implementation with a baseline measured in the same run, and thread pools on a busy
machine with few cores make both sides erratic (a 10k x 384 numpy scan took 0.3 ms or 24 ms
depending on the load). Set the variables yourself to measure multi-threaded runs.
"""

import os
import sys

if sys.argv[:1] == ["-m"]:  # ``python -m benchmarks.x`` is importing this package, before numpy
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")
