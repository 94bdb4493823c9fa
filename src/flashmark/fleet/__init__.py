"""`flashmark fleet`: one benchmark on every board of an Ansible inventory, into one campaign of
a results service. The work is Ansible's (the collection in the repository's contrib/ansible:
its playbook plans, installs, measures and uploads on each board); this package runs that
playbook, follows each board's progress, and reads the campaign's verdict from the service.

    ansible.py    finding ansible-playbook and the collection, running the playbook
    progress.py   what each board's events say: its state, result and why it dropped out
    verdict.py    the campaign's verdict line, with the boards that never reached it
"""
