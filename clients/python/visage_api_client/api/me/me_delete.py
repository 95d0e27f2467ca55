from http import HTTPStatus
from typing import Any, cast
from urllib.parse import quote

import httpx

from ...client import AuthenticatedClient, Client
from ...types import Response, UNSET
from ... import errors

from ...models.account_delete_request import AccountDeleteRequest
from ...models.problem import Problem
from ...types import UNSET, Unset
from typing import cast



def _get_kwargs(
    *,
    body: AccountDeleteRequest,
    accept_language: str | Unset = UNSET,

) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(accept_language, Unset):
        headers["Accept-Language"] = accept_language



    

    

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/v1/me/delete",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs



def _parse_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Any | Problem | None:
    if response.status_code == 204:
        response_204 = cast(Any, None)
        return response_204

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())



        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())



        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())



        return response_403

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


def _build_response(*, client: AuthenticatedClient | Client, response: httpx.Response) -> Response[Any | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    body: AccountDeleteRequest,
    accept_language: str | Unset = UNSET,

) -> Response[Any | Problem]:
    """ Delete your account and everything Visage stores for it

     For the app's "Delete account" (App Store 5.1.1(v), Google Play, PIPL). Every job is deleted with
    its photos, videos and results (unfinished ones are canceled, their held credits released), then
    push devices, API tokens and signed-in devices; every token of the account stops working at once.
    The billing ledger is kept, as bookkeeping law requires, under a renamed, inactive user; credits
    left are not refunded. The password is checked against the sign-in limits (429
    `too_many_failed_logins`); a wrong one is 403 `password_incorrect`. Staff accounts are closed in the
    admin (403 `staff_account`).

    Args:
        accept_language (str | Unset):
        body (AccountDeleteRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
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
    body: AccountDeleteRequest,
    accept_language: str | Unset = UNSET,

) -> Any | Problem | None:
    """ Delete your account and everything Visage stores for it

     For the app's "Delete account" (App Store 5.1.1(v), Google Play, PIPL). Every job is deleted with
    its photos, videos and results (unfinished ones are canceled, their held credits released), then
    push devices, API tokens and signed-in devices; every token of the account stops working at once.
    The billing ledger is kept, as bookkeeping law requires, under a renamed, inactive user; credits
    left are not refunded. The password is checked against the sign-in limits (429
    `too_many_failed_logins`); a wrong one is 403 `password_incorrect`. Staff accounts are closed in the
    admin (403 `staff_account`).

    Args:
        accept_language (str | Unset):
        body (AccountDeleteRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return sync_detailed(
        client=client,
body=body,
accept_language=accept_language,

    ).parsed

async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    body: AccountDeleteRequest,
    accept_language: str | Unset = UNSET,

) -> Response[Any | Problem]:
    """ Delete your account and everything Visage stores for it

     For the app's "Delete account" (App Store 5.1.1(v), Google Play, PIPL). Every job is deleted with
    its photos, videos and results (unfinished ones are canceled, their held credits released), then
    push devices, API tokens and signed-in devices; every token of the account stops working at once.
    The billing ledger is kept, as bookkeeping law requires, under a renamed, inactive user; credits
    left are not refunded. The password is checked against the sign-in limits (429
    `too_many_failed_logins`); a wrong one is 403 `password_incorrect`. Staff accounts are closed in the
    admin (403 `staff_account`).

    Args:
        accept_language (str | Unset):
        body (AccountDeleteRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Any | Problem]
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
    body: AccountDeleteRequest,
    accept_language: str | Unset = UNSET,

) -> Any | Problem | None:
    """ Delete your account and everything Visage stores for it

     For the app's "Delete account" (App Store 5.1.1(v), Google Play, PIPL). Every job is deleted with
    its photos, videos and results (unfinished ones are canceled, their held credits released), then
    push devices, API tokens and signed-in devices; every token of the account stops working at once.
    The billing ledger is kept, as bookkeeping law requires, under a renamed, inactive user; credits
    left are not refunded. The password is checked against the sign-in limits (429
    `too_many_failed_logins`); a wrong one is 403 `password_incorrect`. Staff accounts are closed in the
    admin (403 `staff_account`).

    Args:
        accept_language (str | Unset):
        body (AccountDeleteRequest):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Any | Problem
     """


    return (await asyncio_detailed(
        client=client,
body=body,
accept_language=accept_language,

    )).parsed
