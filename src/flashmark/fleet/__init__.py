"""`flashmark fleet`: one benchmark on every board of an Ansible inventory, into one campaign of
a results service. The work is Ansible's (the collection in collection/, package data); this
package runs its playbook, follows each board's progress and reads the campaign's verdict
(docs/fleet.md).

    run.py: prepare_fleet and the run; ansible.py: the playbook; wheel.py: the wheel boards
    without this flashmark install; progress.py: each board's events; verdict.py: the
    campaign's verdict line.
"""
