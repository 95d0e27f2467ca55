from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.direct_upload import DirectUpload
from ...models.direct_upload_create_request import DirectUploadCreateRequest
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    body:    DirectUploadCreateRequest  |     DirectUploadCreateRequest  |     DirectUploadCreateRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/uploads",
    }

    if isinstance(body, DirectUploadCreateRequest):
        _kwargs["json"] = body.to_dict()

        headers["Content-Type"] = "application/json"
    if isinstance(body, DirectUploadCreateRequest):
        _kwargs["data"] = body.to_dict()
        headers["Content-Type"] = "application/x-www-form-urlencoded"
    if isinstance(body, DirectUploadCreateRequest):
        _kwargs["files"] = body.to_multipart()

        headers["Content-Type"] = "multipart/form-data; boundary=+++"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DirectUpload | Problem | None:
    if response.status_code == 201:
        response_201 = DirectUpload.from_dict(response.json())



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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DirectUpload | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body:    DirectUploadCreateRequest  |     DirectUploadCreateRequest  |     DirectUploadCreateRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[DirectUpload | Problem]:
    """ Start a direct, resumable upload

     Answers presigned S3 part URLs: PUT each part straight to storage (retry a failed part as it is),
    then POST .../complete. After a drop, GET the upload: `parts_received` lists what S3 holds.

    Args:
        accept_language (str | Unset):
        body (DirectUploadCreateRequest):
        body (DirectUploadCreateRequest):
        body (DirectUploadCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DirectUpload | Problem]
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
    body:    DirectUploadCreateRequest  |     DirectUploadCreateRequest  |     DirectUploadCreateRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> DirectUpload | Problem | None:
    """ Start a direct, resumable upload

     Answers presigned S3 part URLs: PUT each part straight to storage (retry a failed part as it is),
    then POST .../complete. After a drop, GET the upload: `parts_received` lists what S3 holds.

    Args:
        accept_language (str | Unset):
        body (DirectUploadCreateRequest):
        body (DirectUploadCreateRequest):
        body (DirectUploadCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DirectUpload | Problem
     """


    return sync_detailed(
        client=client,
body=body,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body:    DirectUploadCreateRequest  |     DirectUploadCreateRequest  |     DirectUploadCreateRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> Response[DirectUpload | Problem]:
    """ Start a direct, resumable upload

     Answers presigned S3 part URLs: PUT each part straight to storage (retry a failed part as it is),
    then POST .../complete. After a drop, GET the upload: `parts_received` lists what S3 holds.

    Args:
        accept_language (str | Unset):
        body (DirectUploadCreateRequest):
        body (DirectUploadCreateRequest):
        body (DirectUploadCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DirectUpload | Problem]
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
    body:    DirectUploadCreateRequest  |     DirectUploadCreateRequest  |     DirectUploadCreateRequest  | Unset = UNSET,
    accept_language: str | Unset = UNSET,

) -> DirectUpload | Problem | None:
    """ Start a direct, resumable upload

     Answers presigned S3 part URLs: PUT each part straight to storage (retry a failed part as it is),
    then POST .../complete. After a drop, GET the upload: `parts_received` lists what S3 holds.

    Args:
        accept_language (str | Unset):
        body (DirectUploadCreateRequest):
        body (DirectUploadCreateRequest):
        body (DirectUploadCreateRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DirectUpload | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,
accept_language=accept_language,

    )).parsed
