"""The shapes the sentinel compares calls and outputs in (mnemara.guard.call_shape)."""
from __future__ import annotations

import pytest

from mnemara.guard.call_shape import call_key, error_shape, observation


@pytest.mark.parametrize("a, b", [
    ("curl -s 'http://127.0.0.1:8765/health?t=1'", "curl -s 'http://127.0.0.1:8765/health?t=2'"),  # a counter
    ("sleep 0.1; echo check 4", "sleep 0.1; echo check 5"),
    ("sleep 5 && cat status", "sleep 20 && cat status"),  # the sleep length
    ("curl -s '/jobs/7?since=2026-12-01T21:10:00Z'", "curl -s '/jobs/7?since=2026-12-01T21:11:00Z'"),  # a timestamp
    ("curl -sS http://x/health", "curl --silent http://x/health"),  # a flag
    ("ls -la out", "ls -al out"),  # flag order
    ("tail -n +57 build.log", "tail -n +60 build.log"),  # an offset
    ("grep -m 5 error log", "grep -m 50 error log"),  # k
    ("python3  run.py", "python3 run.py"),  # whitespace
])
def test_calls_that_differ_only_without_meaning_share_a_key(a, b):
    assert call_key("Bash", {"command": a}) == call_key("Bash", {"command": b})


def test_description_timeout_and_read_offsets_do_not_make_a_call_new():
    assert call_key("Bash", {"command": "make", "description": "build it", "timeout": 60000}) == \
        call_key("Bash", {"command": "make", "description": "build again"})
    assert call_key("Read", {"file_path": "/a", "offset": 1, "limit": 100}) == \
        call_key("Read", {"file_path": "/a", "offset": 101, "limit": 100})
    assert call_key("X", {"a": 1, "b": 2}) == call_key("X", {"b": 2, "a": 1})


@pytest.mark.parametrize("a, b", [
    ("python3 -m unittest test_1", "python3 -m unittest test_2"),  # a number in a name is the name
    ("cat a.txt", "cat b.txt"),
    ("git log", "git status"),
])
def test_different_targets_keep_different_keys(a, b):
    assert call_key("Bash", {"command": a}) != call_key("Bash", {"command": b})
    assert call_key("Read", {"file_path": "/a"}) != call_key("Read", {"file_path": "/b"})
    assert call_key("Read", {"file_path": "/a"}) != call_key("Write", {"file_path": "/a"})


def test_an_unbalanced_quote_or_odd_input_still_has_a_key():
    assert call_key("Bash", {"command": "echo 'oops"}) == call_key("Bash", {"command": "echo  'oops"})
    assert call_key("T", "not a dict") == call_key("T", "not a dict")
    obj = object()
    assert call_key("T", {"v": obj}) == call_key("T", {"v": obj})


def test_an_output_echoing_the_calls_own_counter_or_a_time_is_the_same_observation():
    assert observation("check 4\npending", {"command": "echo check 4"}) == \
        observation("check 5\npending", {"command": "echo check 5"})
    assert observation("21:10:03 pending", {}) == observation("21:11:59 pending", {})
    assert observation("Ran 2 tests in 0.065s\nFAILED", {}) == observation("Ran 2 tests in 0.071s\nFAILED", {})


def test_a_real_change_in_the_output_is_a_different_observation():
    run = {"command": "python3 migrate.py --batch 100"}
    assert observation("migrated rows 1-100 of 400; 300 remaining", run) != \
        observation("migrated rows 101-200 of 400; 200 remaining", run)
    assert observation("OK\nran test_1", {"command": "t test_1"}) != observation("OK\nran test_2", {"command": "t test_2"})
    assert observation("building 10%", {"command": "sleep 10"}) != observation("building 45%", {"command": "sleep 10"})


def test_error_shape_takes_the_calls_own_words_out():
    a = error_shape("<tool_use_error>String to replace not found in file.\nString: return a+b</tool_use_error>",
                    "Edit", {"file_path": "/c.py", "old_string": "return a+b", "new_string": "x"})
    b = error_shape("<tool_use_error>String to replace not found in file.\nString:   return a + b\n</tool_use_error>",
                    "Edit", {"file_path": "/c.py", "old_string": "  return a + b\n", "new_string": "x"})
    assert a == b
    one = error_shape("Exit code 1\ncat: requirements.txt: No such file", "Bash", {"command": "cat requirements.txt"})
    two = error_shape("Exit code 1\ncat: ./requirements.txt: No such file", "Bash", {"command": "cat ./requirements.txt"})
    assert one == two


def test_an_exit_code_alone_is_no_error_to_compare():
    assert error_shape("Exit code 1", "Bash", {"command": "grep x y"}) is None
    assert error_shape("", "Bash", {"command": "false"}) is None


def test_quotes_are_read_as_the_shell_reads_them():
    assert call_key("Bash", {"command": "curl -s 'http://x/health?t=1'"}) == \
        call_key("Bash", {"command": 'curl -s "http://x/health?t=2"'}) == call_key("Bash", {"command": "curl http://x/health?t=3"})
    assert call_key("Bash", {"command": "echo 'a b'"}) != call_key("Bash", {"command": "echo 'a' 'c'"})
    assert call_key("Bash", {"command": "a&&b"}) == call_key("Bash", {"command": "a && b"})
