from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.job import Job
from ...models.job_create_request import JobCreateRequest
from ...models.jobs_create_x_visage_client import JobsCreateXVisageClient
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    body: JobCreateRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
    x_visage_client: JobsCreateXVisageClient | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    if not isinstance(x_visage_client, Unset):
        headers["X-Visage-Client"] = str(x_visage_client)


    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/jobs",
    }

    if not isinstance(body, Unset):
        _kwargs["files"] = body.to_multipart()

    headers["Content-Type"] = "multipart/form-data; boundary=+++"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Job | Problem | None:
    if response.status_code == 201:
        response_201 = Job.from_dict(response.json())



        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 402:
        response_402 = Problem.from_dict(response.json())



        return response_402

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())



        return response_404

    if response.status_code == 406:
        response_406 = Problem.from_dict(response.json())



        return response_406

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())



        return response_422

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Job | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: JobCreateRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
    x_visage_client: JobsCreateXVisageClient | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[Job | Problem]:
    """ Create a face-swap job

    Args:
        idempotency_key (str | Unset):
        x_visage_client (JobsCreateXVisageClient | Unset):
        accept_language (str | Unset):
        body (JobCreateRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Job | Problem]
     """


    kwargs = _get_kwargs(
        body=body,
idempotency_key=idempotency_key,
x_visage_client=x_visage_client,
accept_language=accept_language,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body: JobCreateRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
    x_visage_client: JobsCreateXVisageClient | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Job | Problem | None:
    """ Create a face-swap job

    Args:
        idempotency_key (str | Unset):
        x_visage_client (JobsCreateXVisageClient | Unset):
        accept_language (str | Unset):
        body (JobCreateRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Job | Problem
     """


    return sync_detailed(
        client=client,
body=body,
idempotency_key=idempotency_key,
x_visage_client=x_visage_client,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: JobCreateRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
    x_visage_client: JobsCreateXVisageClient | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[Job | Problem]:
    """ Create a face-swap job

    Args:
        idempotency_key (str | Unset):
        x_visage_client (JobsCreateXVisageClient | Unset):
        accept_language (str | Unset):
        body (JobCreateRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Job | Problem]
     """


    kwargs = _get_kwargs(
        body=body,
idempotency_key=idempotency_key,
x_visage_client=x_visage_client,
accept_language=accept_language,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body: JobCreateRequest | Unset = UNSET,
    idempotency_key: str | Unset = UNSET,
    x_visage_client: JobsCreateXVisageClient | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Job | Problem | None:
    """ Create a face-swap job

    Args:
        idempotency_key (str | Unset):
        x_visage_client (JobsCreateXVisageClient | Unset):
        accept_language (str | Unset):
        body (JobCreateRequest | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Job | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,
idempotency_key=idempotency_key,
x_visage_client=x_visage_client,
accept_language=accept_language,

    )).parsed
