from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.problem import Problem
from ...models.push_device import PushDevice
from ...models.push_device_register_request import PushDeviceRegisterRequest
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    body:    PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/devices",
    }

    if isinstance(body, PushDeviceRegisterRequest):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/json"
    if isinstance(body, PushDeviceRegisterRequest):
        _kwargs["data"] = body.to_dict()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    if isinstance(body, PushDeviceRegisterRequest):
        _kwargs["files"] = body.to_multipart()

        headers["Content-Type"] = "multipart/form-data; boundary=+++"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Problem | PushDevice | None:
    if response.status_code == 200:
        response_200 = PushDevice.from_dict(response.json())



        return response_200

    if response.status_code == 201:
        response_201 = PushDevice.from_dict(response.json())



        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 406:
        response_406 = Problem.from_dict(response.json())



        return response_406

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Problem | PushDevice]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body:    PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[Problem | PushDevice]:
    """ Register this app install's push token

     When one of your jobs ends (succeeded, failed, rejected, canceled) each of your push devices gets
    one notification: a short title and body in the device's locale, and the data `job_id` and `state`.
    Registering a token again updates it (200, same id): call this on every app start and whenever the
    platform rotates the token. A token the platform reports as invalid is removed by the server.

    Args:
        accept_language (str | Unset):
        body (PushDeviceRegisterRequest):
        body (PushDeviceRegisterRequest):
        body (PushDeviceRegisterRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | PushDevice]
     """


    kwargs = _get_kwargs(
        body=body,
accept_language=accept_language,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    *,
    client: AuthenticatedClient,
    body:    PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Problem | PushDevice | None:
    """ Register this app install's push token

     When one of your jobs ends (succeeded, failed, rejected, canceled) each of your push devices gets
    one notification: a short title and body in the device's locale, and the data `job_id` and `state`.
    Registering a token again updates it (200, same id): call this on every app start and whenever the
    platform rotates the token. A token the platform reports as invalid is removed by the server.

    Args:
        accept_language (str | Unset):
        body (PushDeviceRegisterRequest):
        body (PushDeviceRegisterRequest):
        body (PushDeviceRegisterRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | PushDevice
     """


    return sync_detailed(
        client=client,
body=body,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body:    PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[Problem | PushDevice]:
    """ Register this app install's push token

     When one of your jobs ends (succeeded, failed, rejected, canceled) each of your push devices gets
    one notification: a short title and body in the device's locale, and the data `job_id` and `state`.
    Registering a token again updates it (200, same id): call this on every app start and whenever the
    platform rotates the token. A token the platform reports as invalid is removed by the server.

    Args:
        accept_language (str | Unset):
        body (PushDeviceRegisterRequest):
        body (PushDeviceRegisterRequest):
        body (PushDeviceRegisterRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | PushDevice]
     """


    kwargs = _get_kwargs(
        body=body,
accept_language=accept_language,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    *,
    client: AuthenticatedClient,
    body:    PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  |     PushDeviceRegisterRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Problem | PushDevice | None:
    """ Register this app install's push token

     When one of your jobs ends (succeeded, failed, rejected, canceled) each of your push devices gets
    one notification: a short title and body in the device's locale, and the data `job_id` and `state`.
    Registering a token again updates it (200, same id): call this on every app start and whenever the
    platform rotates the token. A token the platform reports as invalid is removed by the server.

    Args:
        accept_language (str | Unset):
        body (PushDeviceRegisterRequest):
        body (PushDeviceRegisterRequest):
        body (PushDeviceRegisterRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | PushDevice
     """


    return (await asyncio_detailed(
        client=client,
body=body,
accept_language=accept_language,

    )).parsed
