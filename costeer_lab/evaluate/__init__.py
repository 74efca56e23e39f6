"""evaluate subpackage."""

__all__: list[str] = []

from costeer_lab.evaluate._limits import Limits, SandboxResult
from costeer_lab.evaluate._sandbox import Sandbox, shared_sandbox
from costeer_lab.evaluate._sandbox_settings import SandboxSettings

__all__ += ["Limits", "Sandbox", "SandboxResult", "SandboxSettings", "shared_sandbox"]

from costeer_lab.evaluate._factor import FactorEvaluator  # noqa: E402
from costeer_lab.evaluate._protocol import Evaluator, InProcessRunner, Runner  # noqa: E402
from costeer_lab.evaluate._pyfunc import PythonFunctionEvaluator  # noqa: E402
from costeer_lab.evaluate._settings import EvaluatorSettings  # noqa: E402

__all__ += ["Evaluator", "EvaluatorSettings", "FactorEvaluator", "InProcessRunner"]
__all__ += ["PythonFunctionEvaluator", "Runner"]
from costeer_lab.evaluate._critic import LLMCodeCritic  # noqa: E402
from costeer_lab.evaluate._multi import MultiEvaluator, evaluator_from_spec  # noqa: E402

__all__ += ["LLMCodeCritic", "MultiEvaluator", "evaluator_from_spec"]
