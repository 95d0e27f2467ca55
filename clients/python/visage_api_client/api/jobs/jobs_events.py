from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.job_event import JobEvent
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id_header, Unset):
        headers["Last-Event-ID"] = last_event_id_header

    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    params: dict[str, Any] = {}

    params["last_event_id"] = last_event_id_query


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/jobs/events",
        "params": params,
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> JobEvent | Problem | None:
    if response.status_code == 200:
        response_200 = JobEvent.from_dict(response.text)



        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[JobEvent | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[JobEvent | Problem]:
    """ Follow your jobs live (Server-Sent Events)

    Args:
        last_event_id_query (str | Unset):
        last_event_id_header (str | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobEvent | Problem]
     """


    kwargs = _get_kwargs(
        last_event_id_query=last_event_id_query,
last_event_id_header=last_event_id_header,
accept_language=accept_language,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> JobEvent | Problem | None:
    """ Follow your jobs live (Server-Sent Events)

    Args:
        last_event_id_query (str | Unset):
        last_event_id_header (str | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobEvent | Problem
     """


    return sync_detailed(
        client=client,
last_event_id_query=last_event_id_query,
last_event_id_header=last_event_id_header,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[JobEvent | Problem]:
    """ Follow your jobs live (Server-Sent Events)

    Args:
        last_event_id_query (str | Unset):
        last_event_id_header (str | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobEvent | Problem]
     """


    kwargs = _get_kwargs(
        last_event_id_query=last_event_id_query,
last_event_id_header=last_event_id_header,
accept_language=accept_language,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    last_event_id_query: str | Unset = UNSET,
    last_event_id_header: str | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> JobEvent | Problem | None:
    """ Follow your jobs live (Server-Sent Events)

    Args:
        last_event_id_query (str | Unset):
        last_event_id_header (str | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobEvent | Problem
     """


    return (await asyncio_detailed(
        client=client,
last_event_id_query=last_event_id_query,
last_event_id_header=last_event_id_header,
accept_language=accept_language,

    )).parsed
