from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.job import Job
from ...models.jobs_retrieve_until import JobsRetrieveUntil
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    job_id: UUID,
    *,
    until: JobsRetrieveUntil | Unset = UNSET,
    wait: float | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(if_none_match, Unset):
        headers["If-None-Match"] = if_none_match

    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    params: dict[str, Any] = {}

    json_until: str | Unset = UNSET
    if not isinstance(until, Unset):
        json_until = until.value

    params["until"] = json_until

    params["wait"] = wait


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/jobs/{job_id}".format(job_id=quote(str(job_id), safe=""),),
        "params": params,
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Job | Problem | None:
    if response.status_code == 200:
        response_200 = Job.from_dict(response.json())



        return response_200

    if response.status_code == 304:
        response_304 = cast(Any, None)
        return response_304

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 406:
        response_406 = Problem.from_dict(response.json())



        return response_406

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Job | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    until: JobsRetrieveUntil | Unset = UNSET,
    wait: float | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[Any | Job | Problem]:
    """ Get a job (conditional with If-None-Match; long-poll with ?wait=N)

    Args:
        job_id (UUID):
        until (JobsRetrieveUntil | Unset):
        wait (float | Unset):
        if_none_match (str | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Job | Problem]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
until=until,
wait=wait,
if_none_match=if_none_match,
accept_language=accept_language,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    until: JobsRetrieveUntil | Unset = UNSET,
    wait: float | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Any | Job | Problem | None:
    """ Get a job (conditional with If-None-Match; long-poll with ?wait=N)

    Args:
        job_id (UUID):
        until (JobsRetrieveUntil | Unset):
        wait (float | Unset):
        if_none_match (str | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Job | Problem
     """


    return sync_detailed(
        job_id=job_id,
client=client,
until=until,
wait=wait,
if_none_match=if_none_match,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    until: JobsRetrieveUntil | Unset = UNSET,
    wait: float | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[Any | Job | Problem]:
    """ Get a job (conditional with If-None-Match; long-poll with ?wait=N)

    Args:
        job_id (UUID):
        until (JobsRetrieveUntil | Unset):
        wait (float | Unset):
        if_none_match (str | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Job | Problem]
     """


    kwargs = _get_kwargs(
        job_id=job_id,
until=until,
wait=wait,
if_none_match=if_none_match,
accept_language=accept_language,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    job_id: UUID,
    *,
    client: AuthenticatedClient,
    until: JobsRetrieveUntil | Unset = UNSET,
    wait: float | Unset = UNSET,
    if_none_match: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Any | Job | Problem | None:
    """ Get a job (conditional with If-None-Match; long-poll with ?wait=N)

    Args:
        job_id (UUID):
        until (JobsRetrieveUntil | Unset):
        wait (float | Unset):
        if_none_match (str | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Job | Problem
     """


    return (await asyncio_detailed(
        job_id=job_id,
client=client,
until=until,
wait=wait,
if_none_match=if_none_match,
accept_language=accept_language,

    )).parsed
