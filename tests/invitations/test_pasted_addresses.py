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


def test_names_pasted_with_addresses_are_kept_for_their_address():
    parsed = parse_addresses(
        'Ada Lovelace <Ada@Example.org>; "Hopper, Grace" <grace@example.org>\n'
        "bob@example.org, Dan  Brown <dan@example.org>, eve@example.org"
    )
    assert parsed.valid == [
        "ada@example.org",
        "grace@example.org",
        "bob@example.org",
        "dan@example.org",
        "eve@example.org",
    ]
    assert parsed.names == {
        "ada@example.org": "Ada Lovelace",
        "grace@example.org": "Hopper, Grace",
        "dan@example.org": "Dan Brown",
    }


def test_a_name_is_cut_to_what_the_accept_form_takes():
    parsed = parse_addresses(f"{'A' * 300} <ada@example.org>")
    assert parsed.names["ada@example.org"] == "A" * 120
