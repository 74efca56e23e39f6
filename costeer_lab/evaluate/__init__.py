"""evaluate subpackage."""

__all__: list[str] = []

# The sandbox is its own package; its names stay importable from here for convenience.
from costeer_lab.sandbox import Limits, Sandbox, SandboxResult, SandboxSettings, shared_sandbox

__all__ += ["Limits", "Sandbox", "SandboxResult", "SandboxSettings", "shared_sandbox"]

from costeer_lab.evaluate._factor import FactorEvaluator  # noqa: E402
from costeer_lab.evaluate._protocol import Evaluator, InProcessRunner, Runner  # noqa: E402
from costeer_lab.evaluate._pyfunc import PythonFunctionEvaluator  # noqa: E402
from costeer_lab.settings import EvaluatorSettings  # noqa: E402

__all__ += ["Evaluator", "EvaluatorSettings", "FactorEvaluator", "InProcessRunner"]
__all__ += ["PythonFunctionEvaluator", "Runner"]
from costeer_lab.evaluate._critic import LLMCodeCritic  # noqa: E402
from costeer_lab.evaluate._multi import MultiEvaluator, evaluator_from_spec  # noqa: E402

__all__ += ["LLMCodeCritic", "MultiEvaluator", "evaluator_from_spec"]
from costeer_lab.evaluate._factor_rdagent import RD_MEASURES, rdagent_measures  # noqa: E402

__all__ += ["RD_MEASURES", "rdagent_measures"]
