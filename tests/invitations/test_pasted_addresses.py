from portal.invitations.addresses import parse_addresses


def test_recipients_pasted_from_outlook_are_read_as_their_addresses():
    parsed = parse_addresses(
        'Ada Lovelace <Ada@Example.org>; "Hopper, Grace" <grace@example.org>; Alan Turing <alan@example.org>'
    )
    assert parsed.valid == ["ada@example.org", "grace@example.org", "alan@example.org"] and parsed.invalid == []


def test_outlook_recipients_mix_with_plain_addresses_and_lines():
    parsed = parse_addresses(
        "Ada Lovelace <ada@example.org>, bob@example.org\ncarol@example.org; Dan <dan@example.org>"
    )
    assert parsed.valid == ["ada@example.org", "bob@example.org", "carol@example.org", "dan@example.org"]


def test_a_broken_address_in_brackets_is_still_reported():
    parsed = parse_addresses("Ada Lovelace <ada@>; Grace <grace@example.org>")
    assert parsed.valid == ["grace@example.org"] and [typed for typed, _ in parsed.invalid] == ["ada@"]


def test_a_plain_typo_is_still_reported():
    assert [typed for typed, _ in parse_addresses("ada@example.org, bob").invalid] == ["bob"]
