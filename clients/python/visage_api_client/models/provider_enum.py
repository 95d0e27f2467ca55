from enum import StrEnum

class ProviderEnum(StrEnum):
    ALIPAY = "alipay"
    STRIPE = "stripe"
    WECHATPAY = "wechatpay"

    def __str__(self) -> str:
        return str(self.value)
