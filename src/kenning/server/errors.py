"""One error schema for every response of the server, and the one place that
translates kenning's exception tree into HTTP.

Every error body is ``{"error": {"code", "message", "field", "request_id"}}``.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException

from ..errors import KenningError, RateLimited, error_code

__all__ = ["ErrorBody", "ErrorResponse", "install", "ERROR_RESPONSES", "error_response"]

log = logging.getLogger("kenning.server")

#: HTTP status of each kenning error code (``kenning.errors.error_code``).
_STATUS = {
    "invalid_input": 400,
    "unauthenticated": 401,
    "permission_denied": 403,
    "quota_exceeded": 403,
    "not_found": 404,
    "conflict": 409,
    "rate_limited": 429,
    "embedding_unavailable": 503,
    "llm_unavailable": 503,
    "store_unavailable": 503,
}
_HTTP_CODES = {
    401: "unauthenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    415: "unsupported_media_type",
}


class ErrorBody(BaseModel):
    """What went wrong."""

    code: str
    message: str
    field: str | None = None
    request_id: str | None = None


class ErrorResponse(BaseModel):
    """The body of every error response."""

    error: ErrorBody


#: Declared on every route so the OpenAPI document lists the error shapes.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ErrorResponse, "description": desc}
    for status, desc in (
        (400, "Invalid input; nothing was changed"),
        (401, "Missing, malformed, unknown or revoked credentials"),
        (403, "The caller may not do this, or the organization's memory quota is full"),
        (404, "Not found, or not visible to the caller"),
        (409, "A concurrent change won, or the memory is not in the needed state"),
        (413, "The request body is too large"),
        (422, "The request does not match the schema"),
        (429, "Too many requests for this key; see Retry-After"),
        (503, "A backend (store, embedding model, LLM) is unavailable"),
    )
}


def error_response(
    request_id: str | None,
    status: int,
    code: str,
    message: str,
    field: str | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """A JSON error response in the one schema."""
    body = ErrorResponse(
        error=ErrorBody(code=code, message=message, field=field, request_id=request_id)
    )
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


def _rid(request: Request) -> str | None:
    return getattr(request.state, "request_id", None)


async def _kenning_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, KenningError)
    code = error_code(exc)
    status = _STATUS.get(code)
    if status is None:
        log.error("unexpected kenning error", exc_info=exc)
        return error_response(_rid(request), 500, "internal", "internal error")
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(exc, RateLimited):
        headers = {"Retry-After": str(exc.retry_after_s)}
    return error_response(
        _rid(request), status, code, str(exc), getattr(exc, "field", None), headers
    )


#: The first element of a validation error's location: which part of the request.
_LOCATIONS = frozenset({"body", "query", "path", "header", "cookie"})


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {}
    if first.get("type") == "json_invalid":  # (the middleware refuses these first)
        detail = (first.get("ctx") or {}).get("error", "malformed")
        message = f"the request body is not valid JSON: {detail}"
        return error_response(_rid(request), 400, "invalid_input", message, "body")
    loc = tuple(first.get("loc", ()))
    if loc and loc[0] in _LOCATIONS:  # where in the request, not part of the field's name
        loc = loc[1:]
    where = ".".join(str(x) for x in loc)
    message = f"{where or 'request'}: {first.get('msg', 'invalid')}"
    return error_response(_rid(request), 422, "invalid_request", message, where or None)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "http_error")
    return error_response(
        _rid(request), exc.status_code, code, str(exc.detail), headers=dict(exc.headers or {})
    )


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(_rid(request), 500, "internal", "internal error")


def install(app: FastAPI) -> None:
    """Register the translations on ``app``."""
    app.add_exception_handler(KenningError, _kenning_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
