"""The explorer's own quick look at what a schedule observed, only to stop exploring early: the trusted side judges
every observation itself (env/families/classic/concurrency.py). Standard library only; explorer.py loads it by path.

    if not plausible(result, scenario): ...   # a correct object could not have given this: stop, keep the interleaving
"""


def plausible(result, scenario):
    """The child's own quick look, only to stop early; the trusted side judges every observation itself."""
    records = [record for thread in result["results"] for record in thread]
    if any(record[2] not in ("", "ValueError") for record in records):
        return False
    if type(result.get("count")) is not int or type(result.get("peak")) is not int or result["count"] < 0:
        return False
    count, peak = result["start_used"]
    if any(record[0] == "reset" for record in records):
        # reset's write is lost by no count: try the orders of the calls (a sweep's two), as the trusted side does,
        # so that a schedule that goes wrong stops the exploration and keeps its interleaving for the report
        if len(records) > 8:
            return True
        for record in result["setup"]:
            count = _after(record[0], count)[0]
        return _some_order(count, tuple(tuple(map(tuple, thread)) for thread in result["results"]), result["count"])
    done = [record for record in result["setup"] + records if not record[2]]
    ops = [record[0] for record in done]
    if result["count"] != count + ops.count("increment") - ops.count("decrement"):
        return False
    return result["peak"] == max([peak] + [record[1] for record in done if record[0] == "increment" and type(record[1]) is int])


def _after(op, count):
    """(the count after, the value returned, the error raised) of ``op`` on a correct object at ``count``."""
    if op == "increment":
        return count + 1, count + 1, ""
    if op == "decrement":
        return (count, None, "ValueError") if count == 0 else (count - 1, count - 1, "")
    return 0, None, ""  # reset (its value is not looked at)


def _some_order(count, threads, final):
    """Whether some order of the threads' calls (each thread's in its own order) gives what they returned and raised
    and the final count."""
    if not any(threads):
        return count == final
    for index, calls in enumerate(threads):
        if calls:
            op, value, error = calls[0]
            after, expected, raised = _after(op, count)
            if error == raised and (op == "reset" or error or value == expected):
                if _some_order(after, threads[:index] + (calls[1:],) + threads[index + 1 :], final):
                    return True
    return False
