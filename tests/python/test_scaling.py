"""Per-argument slopes (e.g. B/op per child span) by exact least squares."""

from __future__ import annotations

from fractions import Fraction

from allocbench.harness import scaling


def result(scenario, args, bytes_per_op, threads=1):
    return {"scenario": scenario, "args": args, "threads": threads,
            "alloc": {"bytes_per_op": bytes_per_op}}


def test_fan_out_slopes_and_their_difference_are_exact():
    results = []
    for n in (1, 5, 20):
        results.append(result("trace_fanout/web_trace", {"children": n, "share": 0}, 900 + 296 * n))
        results.append(result("trace_fanout/web_trace", {"children": n, "share": 1}, 900 + 200 * n))
    by_label = {f.label: f for f in scaling.fits(results) if f.argument == "children"}
    copy = by_label["trace_fanout/web_trace/share:0"]
    share = by_label["trace_fanout/web_trace/share:1"]
    assert (copy.slope, copy.intercept) == (296, 900)
    assert (share.slope, share.intercept) == (200, 900)
    assert copy.exact and share.exact
    assert copy.slope - share.slope == 96
    # "share" varies over two values only: no fit along it.
    assert all(f.argument == "children" for f in scaling.fits(results))


def test_a_noisy_relation_is_fitted_but_not_exact():
    results = [result("s", {"n": x}, y) for x, y in ((1, 10), (2, 21), (3, 29))]
    (fit,) = scaling.fits(results)
    assert fit.slope == Fraction(19, 2)
    assert fit.intercept == 1  # mean y 20 - 19/2 x mean x 2
    assert not fit.exact


def test_one_point_on_the_line_is_not_an_exact_fit():
    # Means x 2.5, y 11.5; sum (x - 2.5)(y - 11.5) = 5 = sum (x - 2.5)^2: slope 1, intercept 9,
    # and only (1, 10) lies on y = 9 + x.
    results = [result("s", {"n": x}, y) for x, y in ((1, 10), (2, 10), (3, 14), (4, 12))]
    (fit,) = scaling.fits(results)
    assert (fit.slope, fit.intercept) == (1, 9)
    assert not fit.exact


def test_threads_and_failed_instances_are_kept_apart():
    results = [result("s", {"n": x}, 10 * x) for x in (1, 2, 3)]
    results += [result("s", {"n": x}, 10 * x, threads=4) for x in (1, 2)]
    results.append({"scenario": "s", "args": {"n": 9}, "threads": 1, "alloc": None})
    (fit,) = scaling.fits(results)
    assert fit.threads == 1 and len(fit.points) == 3 and fit.slope == 10
