"""Rich task context memory and the evidence-driven agent loop.

A per-task memory (:class:`RichMemoryManager`) records every action an agent takes, extracts the
evidence it yields, registers and documents the files it writes (:func:`document_python`),
decides completion from evidence (:class:`Validator`, one rule per task type) and stops loops
(:func:`check_loops`). :class:`TaskAgent` runs the loop with a pluggable planner
(:class:`RuleBasedPlanner`, :class:`LLMPlanner`) and a :class:`ToolBox` whose ``run_python``
runs in the sandbox. Everything is persisted in the store.

Example:
    >>> import tempfile
    >>> mm = RichMemoryManager(":memory:")
    >>> agent = TaskAgent(mm, RuleBasedPlanner(answer="Paris"), tempfile.mkdtemp())
    >>> result = agent.run("What is the capital of France?")
    >>> result.completed, result.context.task_type, [e.type for e in result.context.evidence]
    (True, 'simple_question', ['synthesis'])
"""

from costeer_lab.context._agent import AgentResult, TaskAgent, timeline
from costeer_lab.context._codedoc import (
    ClassDoc,
    CodeReference,
    FunctionDoc,
    Parameter,
    document_python,
)
from costeer_lab.context._completion import (
    COMPLETION_RULES,
    Requirement,
    ValidationReport,
    Validator,
)
from costeer_lab.context._coverage import (
    find_test_references,
    is_test_file,
    read_tests,
    with_test_coverage,
)
from costeer_lab.context._detect import detect_task_type
from costeer_lab.context._evidence import extract_evidence, file_type_of, register_file
from costeer_lab.context._examples import docstring_examples
from costeer_lab.context._llm_planner import LLMPlanner, describe_context, parse_step, parse_steps
from costeer_lab.context._loops import LOOP_RULES, LoopVerdict, action_key, check_loops
from costeer_lab.context._manager import RichMemoryManager
from costeer_lab.context._persist import ContextStore
from costeer_lab.context._planner import (
    PlannedStep,
    Planner,
    RuleBasedPlanner,
    document_task,
    score_steps,
)
from costeer_lab.context._priority import estimate_complexity
from costeer_lab.context._queries import CodeMatch, CrossReference, EvidenceMatch, FileMatch
from costeer_lab.context._records import (
    EVIDENCE_TYPES,
    FILE_TYPES,
    TASK_TYPES,
    Action,
    ActionContext,
    Evidence,
    EvidenceType,
    FileMetadata,
    FileReference,
    FileType,
    Output,
    TaskType,
)
from costeer_lab.context._task import TaskContext
from costeer_lab.context._tools import TOOLS, ToolBox
from costeer_lab.settings import ContextSettings

__all__ = [
    "COMPLETION_RULES",
    "EVIDENCE_TYPES",
    "FILE_TYPES",
    "LOOP_RULES",
    "TASK_TYPES",
    "TOOLS",
    "Action",
    "ActionContext",
    "AgentResult",
    "ClassDoc",
    "CodeMatch",
    "CodeReference",
    "ContextSettings",
    "ContextStore",
    "CrossReference",
    "Evidence",
    "EvidenceMatch",
    "EvidenceType",
    "FileMatch",
    "FileMetadata",
    "FileReference",
    "FileType",
    "FunctionDoc",
    "LLMPlanner",
    "LoopVerdict",
    "Output",
    "Parameter",
    "PlannedStep",
    "Planner",
    "Requirement",
    "RichMemoryManager",
    "RuleBasedPlanner",
    "TaskAgent",
    "TaskContext",
    "TaskType",
    "ToolBox",
    "ValidationReport",
    "Validator",
    "action_key",
    "check_loops",
    "describe_context",
    "detect_task_type",
    "docstring_examples",
    "document_python",
    "document_task",
    "estimate_complexity",
    "extract_evidence",
    "file_type_of",
    "find_test_references",
    "is_test_file",
    "parse_step",
    "parse_steps",
    "read_tests",
    "register_file",
    "score_steps",
    "timeline",
    "with_test_coverage",
]
