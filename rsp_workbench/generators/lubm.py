"""``lubm``: LUBM-style university data, as static data or as a stream (Heaven's set-up).

Heaven (Heaven Sect. 7) streams LUBM through RDF2RDF-Stream with a constant flow to
stress the ρDF reasoning baselines regularly. This is a compact re-implementation of the
LUBM data generator (UBA; Guo, Pan, Heflin 2005) with its naming scheme and cardinality
ranges: per university 15–25 departments (parameter), per department 7–10 full, 10–14
associate, 8–11 assistant professors and 5–7 lecturers, 8–14 undergraduates and 3–4
graduate students per faculty member, 10–20 research groups, 1–2 courses and 1–2
graduate courses per faculty member, 15–20 / 10–18 / 5–10 / 0–5 publications per full /
associate / assistant professor / lecturer. A random full professor is the department
head and has ``ub:headOf`` *instead of* ``ub:worksFor`` (headOf ⊑ worksFor, so a reasoner
must infer it). Each department draws from its own ``random.Random`` keyed by
``(seed, university, department)``, so output does not depend on how it is consumed.

Order: per university its own triples, then per department: the department, research
groups, courses, each faculty member followed by their publications, undergraduates,
graduate students. Stream mode cuts this sequence into stimuli with a flow shape
(constant ``stimulus_size`` every ``period`` by default; :func:`iter_elements` takes any
:class:`~rsp_workbench.generators.flows.FlowShape`). The TBox (``resources/univ-bench.ttl`` and
its ρDF subset) is static data.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator, Mapping

from rsp_workbench.errors import UserError
from rsp_workbench.generators import GeneratorSpec, ParamSpec, check_volume
from rsp_workbench.generators._random import hash64
from rsp_workbench.generators.flows import FlowShape, apply_flow, parse_flow, read_triples
from rsp_workbench.streams.model import StreamElement

UB = "http://swat.cse.lehigh.edu/onto/univ-bench.owl#"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
TBOX_FILE = "univ-bench.ttl"
TBOX_RHODF_FILE = "univ-bench-rhodf.ttl"
#: Universities that degrees are drawn from (UBA uses 1000, most of them not generated).
DEGREE_UNIVERSITIES = 1000

# Inherently sequential (one RNG stream in document order): the local path is the
# default; `rspwb generate --spark` runs the same code as a Spark job.
PREFERRED_ENGINE = "local"

SPEC = GeneratorSpec(
    name="lubm",
    doc="LUBM-style university data (univ-bench vocabulary) streamed with a constant flow "
    "(or any flow shape) or loaded as static data; TBox from resources/univ-bench*.ttl.",
    params=(
        ParamSpec("universities", "int", "number of universities (University0 …)", default=1, minimum=1),
        ParamSpec("min_departments", "int", "fewest departments per university", default=15, minimum=1),
        ParamSpec("max_departments", "int", "most departments per university (>= min_departments)", default=25, minimum=1),
        ParamSpec("seed", "int", "seed of all random choices", default=0),
        ParamSpec(
            "mode", "choice", "stream: the data is the stream; static: it is static data (no stream)",
            default="stream", choices=("stream", "static"),
        ),
        ParamSpec(
            "tbox", "choice", "ontology in the static data: rhodf (ρDF subset), full (with OWL axioms) or none",
            default="rhodf", choices=("rhodf", "full", "none"),
        ),
        ParamSpec("stimulus_size", "int", "triples per stimulus in stream mode (constant flow)", default=100, minimum=1),
        ParamSpec("period", "duration", "application time between two stimuli (> 0)", default=100),
        ParamSpec("start", "int", "application time (ms) of the first stimulus", default=0, minimum=0),
    ),
)

ITEM_NAME = "triples"

# (class local name, count range per department, publications range)
_FACULTY = (
    ("FullProfessor", (7, 10), (15, 20)),
    ("AssociateProfessor", (10, 14), (10, 18)),
    ("AssistantProfessor", (8, 11), (5, 10)),
    ("Lecturer", (5, 7), (0, 5)),
)
_PROFESSORS = ("FullProfessor", "AssociateProfessor", "AssistantProfessor")


@dataclass(frozen=True)
class LubmParams:
    """Validated parameters (times in ms)."""

    universities: int
    min_departments: int
    max_departments: int
    seed: int
    mode: str
    tbox: str
    stimulus_size: int
    period: int
    start: int

    def flow(self) -> FlowShape:
        """The default flow: ``stimulus_size`` triples every ``period`` from ``start``."""
        return FlowShape(shape="constant", size=self.stimulus_size, period=self.period, start=self.start)


def check_params(params: Mapping[str, Any] | LubmParams) -> LubmParams:
    """Validate raw or resolved parameters; errors name the parameter."""
    if isinstance(params, LubmParams):
        return params
    v = SPEC.resolve(params)
    if v["max_departments"] < v["min_departments"]:
        raise UserError(
            f"must be at least min_departments ({v['min_departments']}), got {v['max_departments']}",
            field="param max_departments",
        )
    if v["period"] <= 0:
        raise UserError(f"must be positive, got {v['period']} ms", field="param period")
    check_volume(v["universities"] * v["max_departments"] * 10_000, "triples (about 10,000 per department)",
                 "param universities")
    return LubmParams(**v)


# ------------------------------------------------------------------------------- TBox


def resources_dir() -> Path:
    """The repository's ``resources/`` folder (next to the ``workbench`` package).

    Falls back to ``rsp_workbench/resources`` so that an installation that ships the files as
    package data also works.
    """
    import rsp_workbench

    package = Path(rsp_workbench.__file__).resolve().parent
    for candidate in (package.parent / "resources", package / "resources"):
        if (candidate / TBOX_FILE).is_file():
            return candidate
    raise UserError(f"cannot find {TBOX_FILE}: looked in {package.parent / 'resources'} and {package / 'resources'}")


def tbox_path(rhodf: bool = True) -> Path:
    """Path of the univ-bench TBox: its ρDF subset (default) or the full ontology."""
    return resources_dir() / (TBOX_RHODF_FILE if rhodf else TBOX_FILE)


def tbox_triples(rhodf: bool = True) -> Iterator[tuple[str, str, str]]:
    """The TBox as N-Triples term text triples (parsed with rdflib)."""
    return read_triples(tbox_path(rhodf), "turtle")


# ------------------------------------------------------------------------------- ABox


def _iri(text: str) -> str:
    return f"<{text}>"


def _ub(local: str) -> str:
    return f"<{UB}{local}>"


def _lit(text: str) -> str:
    return f'"{text}"'


def university_iri(u: int) -> str:
    return _iri(f"http://www.University{u}.edu")


def department_iri(u: int, d: int) -> str:
    return _iri(f"http://www.Department{d}.University{u}.edu")


def department_count(params: Mapping[str, Any] | LubmParams, u: int) -> int:
    """Number of departments of university ``u`` (uniform in the parameter range)."""
    p = check_params(params)
    return random.Random(hash64(p.seed, "lubm", "departments", u)).randint(p.min_departments, p.max_departments)


def university_triples(params: Mapping[str, Any] | LubmParams, u: int) -> Iterator[tuple[str, str, str]]:
    """All triples of university ``u`` (pure: depends on seed and ``u`` only)."""
    p = check_params(params)
    univ = university_iri(u)
    yield (univ, RDF_TYPE, _ub("University"))
    yield (univ, _ub("name"), _lit(f"University{u}"))
    for d in range(department_count(p, u)):
        yield from department_triples(p, u, d)


def department_triples(params: Mapping[str, Any] | LubmParams, u: int, d: int) -> Iterator[tuple[str, str, str]]:
    """All triples of department ``d`` of university ``u`` (own RNG keyed by seed, u, d)."""
    p = check_params(params)
    rnd = random.Random(hash64(p.seed, "lubm", "department", u, d))
    base = f"http://www.Department{d}.University{u}.edu"
    dept = department_iri(u, d)
    mail_domain = f"Department{d}.University{u}.edu"
    name, type_, works_for, member_of = _ub("name"), RDF_TYPE, _ub("worksFor"), _ub("memberOf")
    email, telephone = _ub("emailAddress"), _ub("telephone")

    def person(kind: str, i: int) -> str:
        return _iri(f"{base}/{kind}{i}")

    def contact(subject: str, label: str) -> Iterator[tuple[str, str, str]]:
        yield (subject, name, _lit(label))
        yield (subject, email, _lit(f"{label}@{mail_domain}"))
        yield (subject, telephone, _lit(f"xxx-xxx-{rnd.randint(0, 9999):04d}"))

    def degree_university() -> str:
        return university_iri(rnd.randrange(max(DEGREE_UNIVERSITIES, p.universities)))

    yield (dept, type_, _ub("Department"))
    yield (dept, name, _lit(f"Department{d}"))
    yield (dept, _ub("subOrganizationOf"), university_iri(u))

    for g in range(rnd.randint(10, 20)):
        group = _iri(f"{base}/ResearchGroup{g}")
        yield (group, type_, _ub("ResearchGroup"))
        yield (group, _ub("subOrganizationOf"), dept)

    faculty: list[tuple[str, int]] = []  # (kind, index)
    for kind, (low, high), _ in _FACULTY:
        faculty.extend((kind, i) for i in range(rnd.randint(low, high)))
    teaches = [(rnd.randint(1, 2), rnd.randint(1, 2)) for _ in faculty]
    courses = sum(c for c, _ in teaches)
    graduate_courses = sum(g for _, g in teaches)
    for c in range(courses):
        course = _iri(f"{base}/Course{c}")
        yield (course, type_, _ub("Course"))
        yield (course, name, _lit(f"Course{c}"))
    for c in range(graduate_courses):
        course = _iri(f"{base}/GraduateCourse{c}")
        yield (course, type_, _ub("GraduateCourse"))
        yield (course, name, _lit(f"GraduateCourse{c}"))

    full_professors = sum(1 for kind, _ in faculty if kind == "FullProfessor")
    head = rnd.randrange(full_professors)
    publications: dict[str, int] = {}
    next_course = next_graduate_course = 0
    for (kind, i), (n_courses, n_graduate) in zip(faculty, teaches):
        member = person(kind, i)
        yield (member, type_, _ub(kind))
        yield from contact(member, f"{kind}{i}")
        if kind == "FullProfessor" and i == head:
            yield (member, _ub("headOf"), dept)
        else:
            yield (member, works_for, dept)
        for _ in range(n_courses):
            yield (member, _ub("teacherOf"), _iri(f"{base}/Course{next_course}"))
            next_course += 1
        for _ in range(n_graduate):
            yield (member, _ub("teacherOf"), _iri(f"{base}/GraduateCourse{next_graduate_course}"))
            next_graduate_course += 1
        yield (member, _ub("undergraduateDegreeFrom"), degree_university())
        yield (member, _ub("mastersDegreeFrom"), degree_university())
        yield (member, _ub("doctoralDegreeFrom"), degree_university())
        yield (member, _ub("researchInterest"), _lit(f"Research{rnd.randrange(30)}"))
        low, high = next(pubs for k, _, pubs in _FACULTY if k == kind)
        count = rnd.randint(low, high)
        publications[member] = count
        for j in range(count):
            pub = _iri(f"{base}/{kind}{i}/Publication{j}")
            yield (pub, type_, _ub("Publication"))
            yield (pub, name, _lit(f"Publication{j}"))
            yield (pub, _ub("publicationAuthor"), member)

    professors = [person(kind, i) for kind, i in faculty if kind in _PROFESSORS]
    for s in range(len(faculty) * rnd.randint(8, 14)):
        student = person("UndergraduateStudent", s)
        yield (student, type_, _ub("UndergraduateStudent"))
        yield from contact(student, f"UndergraduateStudent{s}")
        yield (student, member_of, dept)
        for c in sorted(rnd.sample(range(courses), min(courses, rnd.randint(2, 4)))):
            yield (student, _ub("takesCourse"), _iri(f"{base}/Course{c}"))
        if rnd.randrange(5) == 0:
            yield (student, _ub("advisor"), rnd.choice(professors))

    for s in range(len(faculty) * rnd.randint(3, 4)):
        student = person("GraduateStudent", s)
        yield (student, type_, _ub("GraduateStudent"))
        yield from contact(student, f"GraduateStudent{s}")
        yield (student, member_of, dept)
        yield (student, _ub("undergraduateDegreeFrom"), degree_university())
        for c in sorted(rnd.sample(range(graduate_courses), min(graduate_courses, rnd.randint(1, 3)))):
            yield (student, _ub("takesCourse"), _iri(f"{base}/GraduateCourse{c}"))
        advisor = rnd.choice(professors)
        yield (student, _ub("advisor"), advisor)
        if rnd.randrange(5) == 0:
            yield (student, type_, _ub("TeachingAssistant"))
            yield (student, _ub("teachingAssistantOf"), _iri(f"{base}/Course{rnd.randrange(courses)}"))
        if rnd.randrange(4) == 0:
            yield (student, type_, _ub("ResearchAssistant"))
        available = publications.get(advisor, 0)
        advisor_path = advisor[1:-1]
        for j in sorted(rnd.sample(range(available), min(available, rnd.randint(0, 5)))):
            yield (_iri(f"{advisor_path}/Publication{j}"), _ub("publicationAuthor"), student)


def triples(params: Mapping[str, Any] | LubmParams) -> Iterator[tuple[str, str, str]]:
    """The whole ABox in generation order."""
    p = check_params(params)
    for u in range(p.universities):
        yield from university_triples(p, u)


def static_triples(params: Mapping[str, Any] | LubmParams) -> Iterator[tuple[str, str, str]]:
    """The TBox (per ``tbox``) and, in ``static`` mode, the ABox."""
    p = check_params(params)
    if p.tbox != "none":
        yield from tbox_triples(rhodf=p.tbox == "rhodf")
    if p.mode == "static":
        yield from triples(p)


def iter_elements(
    params: Mapping[str, Any] | LubmParams, seed: int | None = None, flow: FlowShape | Mapping[str, Any] | None = None
) -> Iterator[StreamElement]:
    """The ABox as a stream (nothing in ``static`` mode), timestamped by ``flow`` or the
    default constant flow (``stimulus_size`` triples every ``period``)."""
    p = check_params(params)
    if seed is not None:
        p = replace(p, seed=seed)
    if p.mode == "static":
        return iter(())
    shape = p.flow() if flow is None else parse_flow(flow)
    return apply_flow(triples(p), shape)
