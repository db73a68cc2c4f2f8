"""Classification.decided_by: every Classify and Decide answer says which
tier of the classifier decided it (docs/CLASSIFICATION.md, "Confidence:
the deciding tier"), so a caller can tell a structured code from a message
pattern from the unknown default."""
import pytest

from rdtest import classify, decide, err, pb, unique


@pytest.fixture(scope="module")
def stub(module_launcher):
    return module_launcher.start().stub


def test_structured_code_is_decided_by_the_structured_tier(stub):
    """AWS sends throttling with HTTP 400; its error code decides."""
    c = classify(stub, "flight_search",
                 err("Rate exceeded", code="ThrottlingException", http_status=400))
    assert c.decided_by == pb.CLASSIFICATION_TIER_STRUCTURED, c
    assert c.retryability == pb.RETRYABILITY_TRANSIENT, c
    assert c.rule_id.startswith("code."), c


def test_http_status_is_decided_by_the_structured_tier(stub):
    c = classify(stub, "flight_search", err("Service unavailable", http_status=503))
    assert c.decided_by == pb.CLASSIFICATION_TIER_STRUCTURED, c
    assert c.retryability == pb.RETRYABILITY_TRANSIENT, c


def test_specific_exception_type_is_decided_by_the_exception_tier(stub):
    c = classify(stub, "flight_search",
                 err("No module named 'pandas'", exception_type="ModuleNotFoundError"))
    assert c.decided_by == pb.CLASSIFICATION_TIER_EXCEPTION, c
    assert c.retryability == pb.RETRYABILITY_PERMANENT, c


def test_message_pattern_is_decided_by_the_message_tier(stub):
    c = classify(stub, "flight_search", err("read ECONNRESET"))
    assert c.decided_by == pb.CLASSIFICATION_TIER_MESSAGE, c
    assert c.retryability == pb.RETRYABILITY_TRANSIENT, c
    assert c.rule_id.startswith("text."), c


def test_generic_type_alone_is_decided_by_the_generic_tier(stub):
    """A generic type decides only when the text says nothing known."""
    c = classify(stub, "flight_search", err("quux", exception_type="TypeError"))
    assert c.decided_by == pb.CLASSIFICATION_TIER_GENERIC, c
    lost = classify(stub, "flight_search", err("fetch failed", exception_type="TypeError"))
    assert lost.decided_by == pb.CLASSIFICATION_TIER_MESSAGE, lost
    assert lost.retryability == pb.RETRYABILITY_TRANSIENT, lost


def test_unknown_error_is_the_documented_default(stub):
    """Nothing decided: transient (000 section 1.3), category unknown, rule
    `unknown`, and the tier says so."""
    c = classify(stub, "flight_search", err("the frobnicator is sulking"))
    assert c.decided_by == pb.CLASSIFICATION_TIER_DEFAULT, c
    assert c.rule_id == "unknown", c
    assert c.retryability == pb.RETRYABILITY_TRANSIENT, c
    assert c.category == pb.CATEGORY_UNKNOWN, c


def test_words_decide_what_no_rule_knows(stub):
    """No rule knows the text, but its words clearly say a program that
    failed: the words tier answers, permanent, and says so; words every
    kind of message holds decide nothing (the test above)."""
    c = classify(stub, "flight_search", err("Build step exited abnormally"))
    assert c.decided_by == pb.CLASSIFICATION_TIER_WORDS, c
    assert c.rule_id == "words", c
    assert c.retryability == pb.RETRYABILITY_PERMANENT, c
    # a category is named (which one follows the corpus's counts)
    assert c.category not in (pb.CATEGORY_UNSPECIFIED, pb.CATEGORY_UNKNOWN), c
    assert c.suggestion, c


def test_decide_answers_carry_the_tier(stub):
    turn = unique("turn")
    r = decide(stub, "flight_search", err("Rate exceeded", code="ThrottlingException",
                                          http_status=400), attempt=1, turn_id=turn)
    assert r.classification.decided_by == pb.CLASSIFICATION_TIER_STRUCTURED, r
    r = decide(stub, "flight_search", err("the frobnicator is sulking"), attempt=1,
               turn_id=unique("turn"))
    assert r.classification.decided_by == pb.CLASSIFICATION_TIER_DEFAULT, r
