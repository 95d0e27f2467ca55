from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.direct_upload import DirectUpload
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast
from uuid import UUID



def _get_kwargs(
    upload_id: UUID,
    *,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/uploads/{upload_id}/complete".format(upload_id=quote(str(upload_id), safe=""),),
    }


    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> DirectUpload | Problem | None:
    if response.status_code == 200:
        response_200 = DirectUpload.from_dict(response.json())



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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())



        return response_409

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[DirectUpload | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    upload_id: UUID,
    *,
    client: AuthenticatedClient,
    accept_language: str | Unset = UNSET,

) -> Response[DirectUpload | Problem]:
    """ Finish an upload: S3 joins the parts, the server validates the stored file

     409 upload_incomplete names the parts still missing; 422 checksum_mismatch when the stored file is
    not the declared one; otherwise the same refusals as a file posted to POST /api/v1/jobs. Once ready,
    create the job with target_upload (and source_upload) set to upload ids.

    Args:
        upload_id (UUID):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DirectUpload | Problem]
     """


    kwargs = _get_kwargs(
        upload_id=upload_id,
accept_language=accept_language,

    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)

def sync(
    upload_id: UUID,
    *,
    client: AuthenticatedClient,
    accept_language: str | Unset = UNSET,

) -> DirectUpload | Problem | None:
    """ Finish an upload: S3 joins the parts, the server validates the stored file

     409 upload_incomplete names the parts still missing; 422 checksum_mismatch when the stored file is
    not the declared one; otherwise the same refusals as a file posted to POST /api/v1/jobs. Once ready,
    create the job with target_upload (and source_upload) set to upload ids.

    Args:
        upload_id (UUID):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DirectUpload | Problem
     """


    return sync_detailed(
        upload_id=upload_id,
client=client,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    upload_id: UUID,
    *,
    client: AuthenticatedClient,
    accept_language: str | Unset = UNSET,

) -> Response[DirectUpload | Problem]:
    """ Finish an upload: S3 joins the parts, the server validates the stored file

     409 upload_incomplete names the parts still missing; 422 checksum_mismatch when the stored file is
    not the declared one; otherwise the same refusals as a file posted to POST /api/v1/jobs. Once ready,
    create the job with target_upload (and source_upload) set to upload ids.

    Args:
        upload_id (UUID):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[DirectUpload | Problem]
     """


    kwargs = _get_kwargs(
        upload_id=upload_id,
accept_language=accept_language,

    )

    response = await client.get_async_httpx_client().request(
        **kwargs
    )

    return _build_response(client=client, response=response)

async def asyncio(
    upload_id: UUID,
    *,
    client: AuthenticatedClient,
    accept_language: str | Unset = UNSET,

) -> DirectUpload | Problem | None:
    """ Finish an upload: S3 joins the parts, the server validates the stored file

     409 upload_incomplete names the parts still missing; 422 checksum_mismatch when the stored file is
    not the declared one; otherwise the same refusals as a file posted to POST /api/v1/jobs. Once ready,
    create the job with target_upload (and source_upload) set to upload ids.

    Args:
        upload_id (UUID):
        accept_language (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        DirectUpload | Problem
     """


    return (await asyncio_detailed(
        upload_id=upload_id,
client=client,
accept_language=accept_language,

    )).parsed
