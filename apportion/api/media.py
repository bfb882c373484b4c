"""What a request must declare before its body is read: a JSON body (`application/json`).

A browser sends a cross-site POST without asking the server first (a CORS "simple request")
only when its body is `text/plain`, a form, or carries no type at all; so a page a user visits
could start solves on a service it can reach. A body declared as JSON needs that preflight,
which this service never grants. So every other media type, and a body without one, is a 415.
"""

from __future__ import annotations

from fastapi import Depends, Request

from apportion.api.problems import ProblemError, shorten

JSON = "application/json"


def json_body(request: Request) -> None:
    declared = request.headers.get("content-type", "")
    media = declared.split(";", 1)[0].strip().lower()
    if media != JSON:
        shown = f"'{shorten(declared)}'" if declared else "no content-type"
        raise ProblemError(
            415,
            f"the body must be JSON sent as content-type '{JSON}'; got {shown}",
            headers={"Accept-Post": JSON},
        )


#: For routers whose requests carry a JSON body.
JsonBody = Depends(json_body)
