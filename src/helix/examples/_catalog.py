"""The small shop every support-shop scenario starts from: six customers and fourteen orders."""

from __future__ import annotations

from datetime import date

from ._shop import Address, Customer, Order, OrderItem, ShopState

__all__ = ["SHOP_AS_OF", "address", "base_shop"]

SHOP_AS_OF = date(2026, 3, 16)
"""The shop's "today" in every scenario."""


def _item(sku: str, name: str, cents: int, qty: int = 1) -> OrderItem:
    return OrderItem(sku=sku, name=name, quantity=qty, unit_price_cents=cents)


def address(line1: str, city: str, zip_code: str) -> Address:
    """A US address."""
    return Address(line1=line1, city=city, zip=zip_code)


def base_shop() -> ShopState:
    """The shop every scenario starts from (a new object each call)."""
    people = [
        (
            "C-101",
            "Ana Souza",
            "ana.souza@example.com",
            "94110",
            address("220 Valencia St", "San Francisco", "94110"),
        ),
        (
            "C-102",
            "Ben Okafor",
            "ben.okafor@example.org",
            "10027",
            address("45 Claremont Ave", "New York", "10027"),
        ),
        (
            "C-103",
            "Chloe Martin",
            "chloe.martin@example.net",
            "60614",
            address("1800 N Clark St", "Chicago", "60614"),
        ),
        (
            "C-104",
            "Dev Patel",
            "dev.patel@example.com",
            "73301",
            address("900 Congress Ave", "Austin", "73301"),
        ),
        (
            "C-105",
            "Emi Tanaka",
            "emi.tanaka@example.com",
            "98109",
            address("500 Mercer St", "Seattle", "98109"),
        ),
        (
            "C-106",
            "Farah Haddad",
            "farah.haddad@example.org",
            "02139",
            address("77 Mass Ave", "Cambridge", "02139"),
        ),
    ]
    customers = {cid: Customer(id=cid, name=n, email=e, zip=z) for cid, n, e, z, _ in people}
    home = {cid: a for cid, _, _, _, a in people}
    d = date

    def order(
        oid: str,
        cid: str,
        status: str,
        items: list[OrderItem],
        placed: date,
        shipped: date | None = None,
        delivered: date | None = None,
        refunded: int = 0,
    ) -> Order:
        total = sum(i.unit_price_cents * i.quantity for i in items)
        return Order.model_validate(
            {
                "id": oid,
                "customer_id": cid,
                "status": status,
                "placed_on": placed,
                "shipped_on": shipped,
                "delivered_on": delivered,
                "items": items,
                "total_cents": total,
                "refunded_cents": refunded,
                "shipping_address": home[cid],
            }
        )

    orders = [
        order("O-5001", "C-101", "pending", [_item("MUG-4", "Ceramic mug set", 4800)], d(2026, 3, 15)),
        order(
            "O-5002",
            "C-102",
            "shipped",
            [_item("SHO-9", "Trail running shoes", 12900)],
            d(2026, 3, 10),
            d(2026, 3, 12),
        ),
        order(
            "O-5003",
            "C-103",
            "delivered",
            [_item("BAG-2", "Canvas tote", 3700, 2)],
            d(2026, 3, 1),
            d(2026, 3, 3),
            d(2026, 3, 6),
        ),
        order(
            "O-5004",
            "C-104",
            "delivered",
            [_item("JKT-1", "Rain jacket", 15900)],
            d(2026, 1, 22),
            d(2026, 1, 26),
            d(2026, 1, 30),
        ),
        order(
            "O-5005",
            "C-105",
            "delivered",
            [_item("LMP-3", "Desk lamp", 4500), _item("BLB-6", "LED bulb pack", 1500)],
            d(2026, 2, 24),
            d(2026, 2, 26),
            d(2026, 3, 1),
        ),
        order(
            "O-5006",
            "C-106",
            "delivered",
            [_item("HDP-5", "Headphones", 8800)],
            d(2026, 2, 20),
            d(2026, 2, 23),
            d(2026, 2, 27),
            3000,
        ),
        order("O-5007", "C-101", "processing", [_item("PLN-7", "Planter", 2600)], d(2026, 3, 14)),
        order(
            "O-5008", "C-102", "shipped", [_item("BKS-3", "Bookshelf", 18900)], d(2026, 3, 9), d(2026, 3, 13)
        ),
        order("O-5009", "C-103", "pending", [_item("KTL-1", "Electric kettle", 5400)], d(2026, 3, 15)),
        order("O-5010", "C-104", "processing", [_item("CAM-2", "Action camera", 32900)], d(2026, 3, 14)),
        order(
            "O-5011",
            "C-105",
            "delivered",
            [_item("VAS-8", "Glass vase", 6900)],
            d(2026, 3, 8),
            d(2026, 3, 10),
            d(2026, 3, 12),
        ),
        order(
            "O-5012",
            "C-106",
            "delivered",
            [_item("CHR-4", "Office chair", 21900)],
            d(2026, 2, 25),
            d(2026, 2, 28),
            d(2026, 3, 3),
        ),
        order(
            "O-5013",
            "C-103",
            "shipped",
            [_item("TEA-2", "Tea sampler", 2900)],
            d(2026, 3, 11),
            d(2026, 3, 14),
        ),
        order("O-5014", "C-104", "pending", [_item("LMP-9", "Floor lamp", 11900)], d(2026, 3, 15)),
    ]
    return ShopState(as_of=SHOP_AS_OF, customers=customers, orders={o.id: o for o in orders})
