from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.job_page import JobPage
from ...models.jobs_list_state import JobsListState
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    favourite: bool | Unset = UNSET,
    page: int | Unset = UNSET,
    q: str | Unset = UNSET,
    state: JobsListState | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    params: dict[str, Any] = {}

    params["favourite"] = favourite

    params["page"] = page

    params["q"] = q

    json_state: str | Unset = UNSET
    if not isinstance(state, Unset):
        json_state = state.value

    params["state"] = json_state


    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}


    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/v1/jobs",
        "params": params,
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> JobPage | Problem | None:
    if response.status_code == 200:
        response_200 = JobPage.from_dict(response.json())



        return response_200

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[JobPage | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    favourite: bool | Unset = UNSET,
    page: int | Unset = UNSET,
    q: str | Unset = UNSET,
    state: JobsListState | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[JobPage | Problem]:
    """ List your jobs, newest first

    Args:
        favourite (bool | Unset):
        page (int | Unset):
        q (str | Unset):
        state (JobsListState | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobPage | Problem]
     """


    kwargs = _get_kwargs(
        favourite=favourite,
page=page,
q=q,
state=state,
accept_language=accept_language,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    favourite: bool | Unset = UNSET,
    page: int | Unset = UNSET,
    q: str | Unset = UNSET,
    state: JobsListState | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> JobPage | Problem | None:
    """ List your jobs, newest first

    Args:
        favourite (bool | Unset):
        page (int | Unset):
        q (str | Unset):
        state (JobsListState | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobPage | Problem
     """


    return sync_detailed(
        client=client,
favourite=favourite,
page=page,
q=q,
state=state,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    favourite: bool | Unset = UNSET,
    page: int | Unset = UNSET,
    q: str | Unset = UNSET,
    state: JobsListState | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[JobPage | Problem]:
    """ List your jobs, newest first

    Args:
        favourite (bool | Unset):
        page (int | Unset):
        q (str | Unset):
        state (JobsListState | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[JobPage | Problem]
     """


    kwargs = _get_kwargs(
        favourite=favourite,
page=page,
q=q,
state=state,
accept_language=accept_language,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    favourite: bool | Unset = UNSET,
    page: int | Unset = UNSET,
    q: str | Unset = UNSET,
    state: JobsListState | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> JobPage | Problem | None:
    """ List your jobs, newest first

    Args:
        favourite (bool | Unset):
        page (int | Unset):
        q (str | Unset):
        state (JobsListState | Unset):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        JobPage | Problem
     """


    return (await asyncio_detailed(
        client=client,
favourite=favourite,
page=page,
q=q,
state=state,
accept_language=accept_language,

    )).parsed
