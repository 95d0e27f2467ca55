from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.checkout import Checkout
from ...models.checkout_request_request import CheckoutRequestRequest
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    body: CheckoutRequestRequest,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/billing/checkout",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Checkout | Problem | None:
    if response.status_code == 201:
        response_201 = Checkout.from_dict(response.json())



        return response_201

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

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())



        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())



        return response_415

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())



        return response_429

    if response.status_code == 502:
        response_502 = Problem.from_dict(response.json())



        return response_502

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())



        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Checkout | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: CheckoutRequestRequest,
    accept_language: str | Unset = UNSET,

) -> Response[Checkout | Problem]:
    """ Start buying a credit pack (Stripe Checkout, Alipay, WeChat Pay)

    Args:
        accept_language (str | Unset):
        body (CheckoutRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Checkout | Problem]
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
    body: CheckoutRequestRequest,
    accept_language: str | Unset = UNSET,

) -> Checkout | Problem | None:
    """ Start buying a credit pack (Stripe Checkout, Alipay, WeChat Pay)

    Args:
        accept_language (str | Unset):
        body (CheckoutRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Checkout | Problem
     """


    return sync_detailed(
        client=client,
body=body,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: CheckoutRequestRequest,
    accept_language: str | Unset = UNSET,

) -> Response[Checkout | Problem]:
    """ Start buying a credit pack (Stripe Checkout, Alipay, WeChat Pay)

    Args:
        accept_language (str | Unset):
        body (CheckoutRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Checkout | Problem]
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
    body: CheckoutRequestRequest,
    accept_language: str | Unset = UNSET,

) -> Checkout | Problem | None:
    """ Start buying a credit pack (Stripe Checkout, Alipay, WeChat Pay)

    Args:
        accept_language (str | Unset):
        body (CheckoutRequestRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Checkout | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,
accept_language=accept_language,

    )).parsed
